; ModuleID = '__compute_module_broadcast_multiply_fusion_kernel_module'
source_filename = "__compute_module_broadcast_multiply_fusion_kernel_module"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-unknown-linux-gnu"

; Function Attrs: nofree norecurse nosync nounwind memory(readwrite, inaccessiblemem: none, target_mem: none) uwtable
define noalias noundef ptr @broadcast_multiply_fusion(ptr nofree readonly captures(none) %0) local_unnamed_addr #0 {
  %2 = getelementptr inbounds nuw i8, ptr %0, i64 24
  %3 = load ptr, ptr %2, align 8, !invariant.load !3
  %4 = load ptr, ptr %3, align 8, !invariant.load !3, !dereferenceable !4
  br label %.preheader

.preheader:                                       ; preds = %1, %.preheader
  %5 = phi i64 [ 0, %1 ], [ %54, %.preheader ]
  %.idx = shl i64 %5, 6
  %6 = getelementptr i8, ptr %4, i64 %.idx
  %7 = load float, ptr %6, align 4, !alias.scope !5
  %8 = fmul float %7, 1.562500e-02
  store float %8, ptr %6, align 4, !alias.scope !5
  %9 = getelementptr i8, ptr %6, i64 4
  %10 = load float, ptr %9, align 4, !alias.scope !5
  %11 = fmul float %10, 1.562500e-02
  store float %11, ptr %9, align 4, !alias.scope !5
  %12 = getelementptr i8, ptr %6, i64 8
  %13 = load float, ptr %12, align 4, !alias.scope !5
  %14 = fmul float %13, 1.562500e-02
  store float %14, ptr %12, align 4, !alias.scope !5
  %15 = getelementptr i8, ptr %6, i64 12
  %16 = load float, ptr %15, align 4, !alias.scope !5
  %17 = fmul float %16, 1.562500e-02
  store float %17, ptr %15, align 4, !alias.scope !5
  %18 = getelementptr i8, ptr %6, i64 16
  %19 = load float, ptr %18, align 4, !alias.scope !5
  %20 = fmul float %19, 1.562500e-02
  store float %20, ptr %18, align 4, !alias.scope !5
  %21 = getelementptr i8, ptr %6, i64 20
  %22 = load float, ptr %21, align 4, !alias.scope !5
  %23 = fmul float %22, 1.562500e-02
  store float %23, ptr %21, align 4, !alias.scope !5
  %24 = getelementptr i8, ptr %6, i64 24
  %25 = load float, ptr %24, align 4, !alias.scope !5
  %26 = fmul float %25, 1.562500e-02
  store float %26, ptr %24, align 4, !alias.scope !5
  %27 = getelementptr i8, ptr %6, i64 28
  %28 = load float, ptr %27, align 4, !alias.scope !5
  %29 = fmul float %28, 1.562500e-02
  store float %29, ptr %27, align 4, !alias.scope !5
  %30 = getelementptr i8, ptr %6, i64 32
  %31 = load float, ptr %30, align 4, !alias.scope !5
  %32 = fmul float %31, 1.562500e-02
  store float %32, ptr %30, align 4, !alias.scope !5
  %33 = getelementptr i8, ptr %6, i64 36
  %34 = load float, ptr %33, align 4, !alias.scope !5
  %35 = fmul float %34, 1.562500e-02
  store float %35, ptr %33, align 4, !alias.scope !5
  %36 = getelementptr i8, ptr %6, i64 40
  %37 = load float, ptr %36, align 4, !alias.scope !5
  %38 = fmul float %37, 1.562500e-02
  store float %38, ptr %36, align 4, !alias.scope !5
  %39 = getelementptr i8, ptr %6, i64 44
  %40 = load float, ptr %39, align 4, !alias.scope !5
  %41 = fmul float %40, 1.562500e-02
  store float %41, ptr %39, align 4, !alias.scope !5
  %42 = getelementptr i8, ptr %6, i64 48
  %43 = load float, ptr %42, align 4, !alias.scope !5
  %44 = fmul float %43, 1.562500e-02
  store float %44, ptr %42, align 4, !alias.scope !5
  %45 = getelementptr i8, ptr %6, i64 52
  %46 = load float, ptr %45, align 4, !alias.scope !5
  %47 = fmul float %46, 1.562500e-02
  store float %47, ptr %45, align 4, !alias.scope !5
  %48 = getelementptr i8, ptr %6, i64 56
  %49 = load float, ptr %48, align 4, !alias.scope !5
  %50 = fmul float %49, 1.562500e-02
  store float %50, ptr %48, align 4, !alias.scope !5
  %51 = getelementptr i8, ptr %6, i64 60
  %52 = load float, ptr %51, align 4, !alias.scope !5
  %53 = fmul float %52, 1.562500e-02
  store float %53, ptr %51, align 4, !alias.scope !5
  %54 = add nuw nsw i64 %5, 1
  %exitcond.not = icmp eq i64 %54, 8
  br i1 %exitcond.not, label %broadcast_multiply_fusion_wrapped.exit, label %.preheader, !llvm.loop !8

broadcast_multiply_fusion_wrapped.exit:           ; preds = %.preheader
  ret ptr null
}

attributes #0 = { nofree norecurse nosync nounwind memory(readwrite, inaccessiblemem: none, target_mem: none) uwtable "frame-pointer"="all" "prefer-vector-width"="256" }

!llvm.module.flags = !{!0, !1}
!xla_cpu_memory_region_name = !{!2}

!0 = !{i32 2, !"Debug Info Version", i32 3}
!1 = !{i32 1, !"xla_dylib_index", i64 1}
!2 = !{!"xla_cpu_emitter__loop_fusion_kernel_emitter__hlo_opcode__fusion"}
!3 = !{}
!4 = !{i64 512}
!5 = !{!6}
!6 = distinct !{!6, !7, !"broadcast_multiply_fusion_wrapped: argument 0"}
!7 = distinct !{!7, !"broadcast_multiply_fusion_wrapped"}
!8 = distinct !{!8, !9}
!9 = !{!"llvm.loop.unroll.disable"}
