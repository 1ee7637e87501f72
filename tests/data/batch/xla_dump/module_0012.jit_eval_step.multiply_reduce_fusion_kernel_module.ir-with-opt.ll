; ModuleID = '__compute_module_multiply_reduce_fusion_kernel_module'
source_filename = "__compute_module_multiply_reduce_fusion_kernel_module"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-unknown-linux-gnu"

; Function Attrs: nofree norecurse nosync nounwind memory(readwrite, target_mem: none) uwtable
define noalias noundef ptr @multiply_reduce_fusion(ptr nofree readonly captures(none) %0) local_unnamed_addr #0 {
vector.ph:
  %1 = getelementptr inbounds nuw i8, ptr %0, i64 24
  %2 = load ptr, ptr %1, align 8, !invariant.load !3
  %3 = load ptr, ptr %2, align 8, !invariant.load !3, !dereferenceable !4
  %4 = getelementptr inbounds nuw i8, ptr %2, i64 16
  %5 = load ptr, ptr %4, align 8, !invariant.load !3, !dereferenceable !5
  tail call void @llvm.experimental.noalias.scope.decl(metadata !6)
  tail call void @llvm.experimental.noalias.scope.decl(metadata !9)
  %wide.vec = load <64 x float>, ptr %3, align 4, !invariant.load !3, !alias.scope !6, !noalias !9
  %strided.vec = shufflevector <64 x float> %wide.vec, <64 x float> poison, <8 x i32> <i32 0, i32 8, i32 16, i32 24, i32 32, i32 40, i32 48, i32 56>
  %strided.vec1 = shufflevector <64 x float> %wide.vec, <64 x float> poison, <8 x i32> <i32 1, i32 9, i32 17, i32 25, i32 33, i32 41, i32 49, i32 57>
  %strided.vec2 = shufflevector <64 x float> %wide.vec, <64 x float> poison, <8 x i32> <i32 2, i32 10, i32 18, i32 26, i32 34, i32 42, i32 50, i32 58>
  %strided.vec3 = shufflevector <64 x float> %wide.vec, <64 x float> poison, <8 x i32> <i32 3, i32 11, i32 19, i32 27, i32 35, i32 43, i32 51, i32 59>
  %strided.vec4 = shufflevector <64 x float> %wide.vec, <64 x float> poison, <8 x i32> <i32 4, i32 12, i32 20, i32 28, i32 36, i32 44, i32 52, i32 60>
  %strided.vec5 = shufflevector <64 x float> %wide.vec, <64 x float> poison, <8 x i32> <i32 5, i32 13, i32 21, i32 29, i32 37, i32 45, i32 53, i32 61>
  %strided.vec6 = shufflevector <64 x float> %wide.vec, <64 x float> poison, <8 x i32> <i32 6, i32 14, i32 22, i32 30, i32 38, i32 46, i32 54, i32 62>
  %strided.vec7 = shufflevector <64 x float> %wide.vec, <64 x float> poison, <8 x i32> <i32 7, i32 15, i32 23, i32 31, i32 39, i32 47, i32 55, i32 63>
  %6 = fmul <8 x float> %strided.vec, splat (float 2.500000e-01)
  %7 = fmul <8 x float> %strided.vec1, splat (float 2.500000e-01)
  %8 = tail call reassoc <8 x float> @llvm.maximum.v8f32(<8 x float> %6, <8 x float> %7)
  %9 = fmul <8 x float> %strided.vec2, splat (float 2.500000e-01)
  %10 = tail call reassoc <8 x float> @llvm.maximum.v8f32(<8 x float> %8, <8 x float> %9)
  %11 = fmul <8 x float> %strided.vec3, splat (float 2.500000e-01)
  %12 = tail call reassoc <8 x float> @llvm.maximum.v8f32(<8 x float> %10, <8 x float> %11)
  %13 = fmul <8 x float> %strided.vec4, splat (float 2.500000e-01)
  %14 = tail call reassoc <8 x float> @llvm.maximum.v8f32(<8 x float> %12, <8 x float> %13)
  %15 = fmul <8 x float> %strided.vec5, splat (float 2.500000e-01)
  %16 = tail call reassoc <8 x float> @llvm.maximum.v8f32(<8 x float> %14, <8 x float> %15)
  %17 = fmul <8 x float> %strided.vec6, splat (float 2.500000e-01)
  %18 = tail call reassoc <8 x float> @llvm.maximum.v8f32(<8 x float> %16, <8 x float> %17)
  %19 = fmul <8 x float> %strided.vec7, splat (float 2.500000e-01)
  %20 = tail call reassoc <8 x float> @llvm.maximum.v8f32(<8 x float> %18, <8 x float> %19)
  store <8 x float> %20, ptr %5, align 4, !alias.scope !9, !noalias !6
  ret ptr null
}

; Function Attrs: mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite)
declare void @llvm.experimental.noalias.scope.decl(metadata) #1

; Function Attrs: nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none)
declare <8 x float> @llvm.maximum.v8f32(<8 x float>, <8 x float>) #2

attributes #0 = { nofree norecurse nosync nounwind memory(readwrite, target_mem: none) uwtable "frame-pointer"="all" "prefer-vector-width"="256" }
attributes #1 = { mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite) }
attributes #2 = { nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none) }

!llvm.module.flags = !{!0, !1}
!xla_cpu_memory_region_name = !{!2}

!0 = !{i32 2, !"Debug Info Version", i32 3}
!1 = !{i32 1, !"xla_dylib_index", i64 1}
!2 = !{!"xla_cpu_emitter__loop_fusion_kernel_emitter__hlo_opcode__fusion"}
!3 = !{}
!4 = !{i64 256}
!5 = !{i64 32}
!6 = !{!7}
!7 = distinct !{!7, !8, !"multiply_reduce_fusion_wrapped: argument 0"}
!8 = distinct !{!8, !"multiply_reduce_fusion_wrapped"}
!9 = !{!10}
!10 = distinct !{!10, !8, !"multiply_reduce_fusion_wrapped: argument 1"}
