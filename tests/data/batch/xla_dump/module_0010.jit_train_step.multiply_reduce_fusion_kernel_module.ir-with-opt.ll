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
  %5 = load ptr, ptr %4, align 8, !invariant.load !3, !dereferenceable !4
  %6 = getelementptr inbounds nuw i8, ptr %2, i64 32
  %7 = load ptr, ptr %6, align 8, !invariant.load !3, !dereferenceable !5
  %8 = getelementptr inbounds nuw i8, ptr %2, i64 48
  %9 = load ptr, ptr %8, align 8, !invariant.load !3, !dereferenceable !5
  tail call void @llvm.experimental.noalias.scope.decl(metadata !6)
  tail call void @llvm.experimental.noalias.scope.decl(metadata !9)
  tail call void @llvm.experimental.noalias.scope.decl(metadata !11)
  tail call void @llvm.experimental.noalias.scope.decl(metadata !13)
  %wide.load = load <8 x float>, ptr %7, align 4, !invariant.load !3, !alias.scope !11, !noalias !15
  %wide.vec = load <64 x float>, ptr %5, align 4, !invariant.load !3, !alias.scope !9, !noalias !16
  %strided.vec = shufflevector <64 x float> %wide.vec, <64 x float> poison, <8 x i32> <i32 0, i32 8, i32 16, i32 24, i32 32, i32 40, i32 48, i32 56>
  %strided.vec2 = shufflevector <64 x float> %wide.vec, <64 x float> poison, <8 x i32> <i32 1, i32 9, i32 17, i32 25, i32 33, i32 41, i32 49, i32 57>
  %strided.vec3 = shufflevector <64 x float> %wide.vec, <64 x float> poison, <8 x i32> <i32 2, i32 10, i32 18, i32 26, i32 34, i32 42, i32 50, i32 58>
  %strided.vec4 = shufflevector <64 x float> %wide.vec, <64 x float> poison, <8 x i32> <i32 3, i32 11, i32 19, i32 27, i32 35, i32 43, i32 51, i32 59>
  %strided.vec5 = shufflevector <64 x float> %wide.vec, <64 x float> poison, <8 x i32> <i32 4, i32 12, i32 20, i32 28, i32 36, i32 44, i32 52, i32 60>
  %strided.vec6 = shufflevector <64 x float> %wide.vec, <64 x float> poison, <8 x i32> <i32 5, i32 13, i32 21, i32 29, i32 37, i32 45, i32 53, i32 61>
  %strided.vec7 = shufflevector <64 x float> %wide.vec, <64 x float> poison, <8 x i32> <i32 6, i32 14, i32 22, i32 30, i32 38, i32 46, i32 54, i32 62>
  %strided.vec8 = shufflevector <64 x float> %wide.vec, <64 x float> poison, <8 x i32> <i32 7, i32 15, i32 23, i32 31, i32 39, i32 47, i32 55, i32 63>
  %10 = fmul <8 x float> %wide.load, %strided.vec
  %wide.vec9 = load <64 x float>, ptr %3, align 4, !invariant.load !3, !alias.scope !6, !noalias !17
  %strided.vec10 = shufflevector <64 x float> %wide.vec9, <64 x float> poison, <8 x i32> <i32 0, i32 8, i32 16, i32 24, i32 32, i32 40, i32 48, i32 56>
  %strided.vec11 = shufflevector <64 x float> %wide.vec9, <64 x float> poison, <8 x i32> <i32 1, i32 9, i32 17, i32 25, i32 33, i32 41, i32 49, i32 57>
  %strided.vec12 = shufflevector <64 x float> %wide.vec9, <64 x float> poison, <8 x i32> <i32 2, i32 10, i32 18, i32 26, i32 34, i32 42, i32 50, i32 58>
  %strided.vec13 = shufflevector <64 x float> %wide.vec9, <64 x float> poison, <8 x i32> <i32 3, i32 11, i32 19, i32 27, i32 35, i32 43, i32 51, i32 59>
  %strided.vec14 = shufflevector <64 x float> %wide.vec9, <64 x float> poison, <8 x i32> <i32 4, i32 12, i32 20, i32 28, i32 36, i32 44, i32 52, i32 60>
  %strided.vec15 = shufflevector <64 x float> %wide.vec9, <64 x float> poison, <8 x i32> <i32 5, i32 13, i32 21, i32 29, i32 37, i32 45, i32 53, i32 61>
  %strided.vec16 = shufflevector <64 x float> %wide.vec9, <64 x float> poison, <8 x i32> <i32 6, i32 14, i32 22, i32 30, i32 38, i32 46, i32 54, i32 62>
  %strided.vec17 = shufflevector <64 x float> %wide.vec9, <64 x float> poison, <8 x i32> <i32 7, i32 15, i32 23, i32 31, i32 39, i32 47, i32 55, i32 63>
  %11 = fmul <8 x float> %10, %strided.vec10
  %12 = fadd reassoc <8 x float> %11, zeroinitializer
  %13 = fmul <8 x float> %wide.load, %strided.vec2
  %14 = fmul <8 x float> %13, %strided.vec11
  %15 = fadd reassoc <8 x float> %12, %14
  %16 = fmul <8 x float> %wide.load, %strided.vec3
  %17 = fmul <8 x float> %16, %strided.vec12
  %18 = fadd reassoc <8 x float> %15, %17
  %19 = fmul <8 x float> %wide.load, %strided.vec4
  %20 = fmul <8 x float> %19, %strided.vec13
  %21 = fadd reassoc <8 x float> %18, %20
  %22 = fmul <8 x float> %wide.load, %strided.vec5
  %23 = fmul <8 x float> %22, %strided.vec14
  %24 = fadd reassoc <8 x float> %21, %23
  %25 = fmul <8 x float> %wide.load, %strided.vec6
  %26 = fmul <8 x float> %25, %strided.vec15
  %27 = fadd reassoc <8 x float> %24, %26
  %28 = fmul <8 x float> %wide.load, %strided.vec7
  %29 = fmul <8 x float> %28, %strided.vec16
  %30 = fadd reassoc <8 x float> %27, %29
  %31 = fmul <8 x float> %wide.load, %strided.vec8
  %32 = fmul <8 x float> %31, %strided.vec17
  %33 = fadd reassoc <8 x float> %30, %32
  store <8 x float> %33, ptr %9, align 4, !alias.scope !13, !noalias !18
  ret ptr null
}

; Function Attrs: mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite)
declare void @llvm.experimental.noalias.scope.decl(metadata) #1

attributes #0 = { nofree norecurse nosync nounwind memory(readwrite, target_mem: none) uwtable "frame-pointer"="all" "prefer-vector-width"="256" }
attributes #1 = { mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite) }

!llvm.module.flags = !{!0, !1}
!xla_cpu_memory_region_name = !{!2}

!0 = !{i32 2, !"Debug Info Version", i32 3}
!1 = !{i32 1, !"xla_dylib_index", i64 5}
!2 = !{!"xla_cpu_emitter__loop_fusion_kernel_emitter__hlo_opcode__fusion"}
!3 = !{}
!4 = !{i64 256}
!5 = !{i64 32}
!6 = !{!7}
!7 = distinct !{!7, !8, !"multiply_reduce_fusion_wrapped: argument 0"}
!8 = distinct !{!8, !"multiply_reduce_fusion_wrapped"}
!9 = !{!10}
!10 = distinct !{!10, !8, !"multiply_reduce_fusion_wrapped: argument 1"}
!11 = !{!12}
!12 = distinct !{!12, !8, !"multiply_reduce_fusion_wrapped: argument 2"}
!13 = !{!14}
!14 = distinct !{!14, !8, !"multiply_reduce_fusion_wrapped: argument 3"}
!15 = !{!7, !10, !14}
!16 = !{!7, !12, !14}
!17 = !{!10, !12, !14}
!18 = !{!7, !10, !12}
