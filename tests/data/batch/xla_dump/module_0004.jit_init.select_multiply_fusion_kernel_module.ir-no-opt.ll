; ModuleID = '__compute_module_select_multiply_fusion_kernel_module'
source_filename = "__compute_module_select_multiply_fusion_kernel_module"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-unknown-linux-gnu"

%XLA_CPU_KernelCallFrame = type { ptr, ptr, i64, ptr }
%XLA_CPU_KernelArg = type { ptr, i64 }
%kernel_dim3 = type { i64, i64, i64 }

declare float @xla.log1p.f32(float)

; Function Attrs: uwtable
define ptr @select_multiply_fusion(ptr %0) #0 {
  %2 = getelementptr inbounds %XLA_CPU_KernelCallFrame, ptr %0, i32 0, i32 3
  %3 = load ptr, ptr %2, align 8, !invariant.load !3
  %4 = getelementptr inbounds %XLA_CPU_KernelArg, ptr %3, i32 0, i32 0
  %5 = load ptr, ptr %4, align 8, !invariant.load !3, !dereferenceable !4
  %6 = getelementptr inbounds %XLA_CPU_KernelArg, ptr %3, i32 1, i32 0
  %7 = load ptr, ptr %6, align 8, !invariant.load !3, !dereferenceable !4
  %8 = getelementptr inbounds %XLA_CPU_KernelArg, ptr %3, i32 2, i32 0
  %9 = load ptr, ptr %8, align 8, !invariant.load !3, !dereferenceable !4
  %10 = getelementptr inbounds %XLA_CPU_KernelCallFrame, ptr %0, i32 0, i32 1
  %11 = load ptr, ptr %10, align 8
  %12 = getelementptr inbounds %kernel_dim3, ptr %11, i32 0, i32 0
  %13 = load i64, ptr %12, align 4, !invariant.load !3
  %14 = getelementptr inbounds %kernel_dim3, ptr %11, i32 0, i32 1
  %15 = load i64, ptr %14, align 4, !invariant.load !3
  %16 = getelementptr inbounds %kernel_dim3, ptr %11, i32 0, i32 2
  %17 = load i64, ptr %16, align 4, !invariant.load !3
  call void @select_multiply_fusion_wrapped(ptr %5, ptr %7, ptr %9, i64 %13, i64 %15, i64 %17)
  ret ptr null
}

; Function Attrs: alwaysinline
define internal void @select_multiply_fusion_wrapped(ptr noalias align 64 dereferenceable(1024) %0, ptr noalias align 64 dereferenceable(1024) %1, ptr noalias align 64 dereferenceable(1024) %2, i64 %3, i64 %4, i64 %5) #1 {
  br label %7

7:                                                ; preds = %71, %6
  %8 = phi i64 [ %72, %71 ], [ 0, %6 ]
  %9 = icmp slt i64 %8, 16
  br i1 %9, label %10, label %73

10:                                               ; preds = %7
  %11 = mul nsw i64 %8, 16
  br label %12

12:                                               ; preds = %15, %10
  %13 = phi i64 [ %70, %15 ], [ 0, %10 ]
  %14 = icmp slt i64 %13, 16
  br i1 %14, label %15, label %71

15:                                               ; preds = %12
  %16 = add nsw i64 %11, %13
  %17 = getelementptr inbounds [256 x i32], ptr %0, i32 0, i64 %16
  %18 = load i32, ptr %17, align 4, !invariant.load !3
  %19 = getelementptr inbounds [256 x i32], ptr %1, i32 0, i64 %16
  %20 = load i32, ptr %19, align 4, !invariant.load !3
  %21 = xor i32 %18, %20
  %22 = lshr i32 %21, 9
  %23 = or i32 %22, 1065353216
  %24 = bitcast i32 %23 to float
  %25 = fadd float %24, -1.000000e+00
  %26 = fmul float %25, 2.000000e+00
  %27 = fadd float %26, f0xBF7FFFFF
  %28 = call float @llvm.maximum.f32(float %27, float f0xBF7FFFFF)
  %29 = fneg float %28
  %30 = fmul float %28, %29
  %31 = call float @xla.log1p.f32(float %30)
  %32 = fneg float %31
  %33 = fcmp olt float %32, 5.000000e+00
  %34 = select i1 %33, float f0x32F16588, float f0xB951F09B
  %35 = select i1 %33, float f0x34B84B36, float f0x38D3B56B
  %36 = call float @llvm.sqrt.f32(float %32)
  %37 = fadd float %32, -2.500000e+00
  %38 = fadd float %36, -3.000000e+00
  %39 = select i1 %33, float %37, float %38
  %40 = fmul float %34, %39
  %41 = fadd float %35, %40
  %42 = select i1 %33, float f0xB66C7357, float f0x3AB0DC72
  %43 = fmul float %41, %39
  %44 = fadd float %42, %43
  %45 = select i1 %33, float f0xB6935AC1, float f0xBB70BDE7
  %46 = fmul float %44, %39
  %47 = fadd float %45, %46
  %48 = select i1 %33, float f0x396532DB, float f0x3BBC127B
  %49 = fmul float %47, %39
  %50 = fadd float %48, %49
  %51 = select i1 %33, float f0xBAA45408, float f0xBBF9C5D7
  %52 = fmul float %50, %39
  %53 = fadd float %51, %52
  %54 = select i1 %33, float f0xBB88E4EF, float f0x3C1AA57E
  %55 = fmul float %53, %39
  %56 = fadd float %54, %55
  %57 = select i1 %33, float f0x3E7C8F63, float f0x3F8036DB
  %58 = fmul float %56, %39
  %59 = fadd float %57, %58
  %60 = select i1 %33, float f0x3FC02E2F, float f0x40354F7E
  %61 = fmul float %59, %39
  %62 = call float @llvm.fabs.f32(float %28)
  %63 = fadd float %60, %61
  %64 = fcmp oeq float %62, 1.000000e+00
  %65 = fmul float %28, +inf
  %66 = fmul float %63, %28
  %67 = select i1 %64, float %65, float %66
  %68 = fmul float %67, f0x3EB504F3
  %69 = getelementptr inbounds [256 x float], ptr %2, i32 0, i64 %16
  store float %68, ptr %69, align 4
  %70 = add i64 %13, 1
  br label %12

71:                                               ; preds = %12
  %72 = add i64 %8, 1
  br label %7, !llvm.loop !5

73:                                               ; preds = %7
  ret void
}

; Function Attrs: nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none)
declare float @llvm.maximum.f32(float, float) #2

; Function Attrs: nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none)
declare float @llvm.sqrt.f32(float) #2

; Function Attrs: nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none)
declare float @llvm.fabs.f32(float) #2

attributes #0 = { uwtable "frame-pointer"="all" "prefer-vector-width"="256" }
attributes #1 = { alwaysinline }
attributes #2 = { nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none) }

!llvm.module.flags = !{!0, !1}
!xla_cpu_memory_region_name = !{!2}

!0 = !{i32 2, !"Debug Info Version", i32 3}
!1 = !{i32 1, !"xla_dylib_index", i64 12}
!2 = !{!"xla_cpu_emitter__loop_fusion_kernel_emitter__hlo_opcode__fusion"}
!3 = !{}
!4 = !{i64 1024}
!5 = distinct !{!5, !6}
!6 = !{!"llvm.loop.unroll.disable"}
