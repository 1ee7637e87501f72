; ModuleID = '__compute_module_multiply_reduce_fusion.1_kernel_module'
source_filename = "__compute_module_multiply_reduce_fusion.1_kernel_module"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-unknown-linux-gnu"

%XLA_CPU_KernelCallFrame = type { ptr, ptr, i64, ptr }
%XLA_CPU_KernelArg = type { ptr, i64 }
%kernel_dim3 = type { i64, i64, i64 }

; Function Attrs: uwtable
define ptr @multiply_reduce_fusion.1(ptr %0) #0 {
  %2 = getelementptr inbounds %XLA_CPU_KernelCallFrame, ptr %0, i32 0, i32 3
  %3 = load ptr, ptr %2, align 8, !invariant.load !3
  %4 = getelementptr inbounds %XLA_CPU_KernelArg, ptr %3, i32 0, i32 0
  %5 = load ptr, ptr %4, align 8, !invariant.load !3, !dereferenceable !4
  %6 = getelementptr inbounds %XLA_CPU_KernelArg, ptr %3, i32 1, i32 0
  %7 = load ptr, ptr %6, align 8, !invariant.load !3, !dereferenceable !5
  %8 = getelementptr inbounds %XLA_CPU_KernelCallFrame, ptr %0, i32 0, i32 1
  %9 = load ptr, ptr %8, align 8
  %10 = getelementptr inbounds %kernel_dim3, ptr %9, i32 0, i32 0
  %11 = load i64, ptr %10, align 4, !invariant.load !3
  %12 = getelementptr inbounds %kernel_dim3, ptr %9, i32 0, i32 1
  %13 = load i64, ptr %12, align 4, !invariant.load !3
  %14 = getelementptr inbounds %kernel_dim3, ptr %9, i32 0, i32 2
  %15 = load i64, ptr %14, align 4, !invariant.load !3
  call void @multiply_reduce_fusion.1_wrapped(ptr %5, ptr %7, i64 %11, i64 %13, i64 %15)
  ret ptr null
}

; Function Attrs: alwaysinline
define internal void @multiply_reduce_fusion.1_wrapped(ptr noalias align 64 dereferenceable(256) %0, ptr noalias align 64 dereferenceable(32) %1, i64 %2, i64 %3, i64 %4) #1 {
  br label %6

6:                                                ; preds = %22, %5
  %7 = phi i64 [ %24, %22 ], [ 0, %5 ]
  %8 = icmp slt i64 %7, 8
  br i1 %8, label %9, label %25

9:                                                ; preds = %6
  %10 = mul nsw i64 %7, 8
  br label %11

11:                                               ; preds = %15, %9
  %12 = phi i64 [ %21, %15 ], [ 0, %9 ]
  %13 = phi float [ %20, %15 ], [ -inf, %9 ]
  %14 = icmp slt i64 %12, 8
  br i1 %14, label %15, label %22

15:                                               ; preds = %11
  %16 = add nsw i64 %10, %12
  %17 = getelementptr inbounds [64 x float], ptr %0, i32 0, i64 %16
  %18 = load float, ptr %17, align 4, !invariant.load !3
  %19 = fmul float %18, 2.500000e-01
  %20 = call reassoc float @llvm.maximum.f32(float %13, float %19)
  %21 = add i64 %12, 1
  br label %11

22:                                               ; preds = %11
  %23 = getelementptr inbounds [8 x float], ptr %1, i32 0, i64 %7
  store float %13, ptr %23, align 4
  %24 = add i64 %7, 1
  br label %6, !llvm.loop !6

25:                                               ; preds = %6
  ret void
}

; Function Attrs: nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none)
declare float @llvm.maximum.f32(float, float) #2

attributes #0 = { uwtable "frame-pointer"="all" "prefer-vector-width"="256" }
attributes #1 = { alwaysinline }
attributes #2 = { nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none) }

!llvm.module.flags = !{!0, !1}
!xla_cpu_memory_region_name = !{!2}

!0 = !{i32 2, !"Debug Info Version", i32 3}
!1 = !{i32 1, !"xla_dylib_index", i64 6}
!2 = !{!"xla_cpu_emitter__loop_fusion_kernel_emitter__hlo_opcode__fusion"}
!3 = !{}
!4 = !{i64 256}
!5 = !{i64 32}
!6 = distinct !{!6, !7}
!7 = !{!"llvm.loop.unroll.disable"}
