; ModuleID = '__compute_module_broadcast_add_fusion.6_kernel_module'
source_filename = "__compute_module_broadcast_add_fusion.6_kernel_module"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-unknown-linux-gnu"

; Function Attrs: nofree norecurse nosync nounwind memory(readwrite, target_mem: none) uwtable
define noalias noundef ptr @broadcast_add_fusion.6(ptr nofree readonly captures(none) %0) local_unnamed_addr #0 {
  %2 = getelementptr inbounds nuw i8, ptr %0, i64 24
  %3 = load ptr, ptr %2, align 8, !invariant.load !3
  %4 = load ptr, ptr %3, align 8, !invariant.load !3, !dereferenceable !4
  %5 = getelementptr inbounds nuw i8, ptr %3, i64 16
  %6 = load ptr, ptr %5, align 8, !invariant.load !3, !dereferenceable !5
  %7 = getelementptr inbounds nuw i8, ptr %3, i64 32
  %8 = load ptr, ptr %7, align 8, !invariant.load !3, !dereferenceable !6
  %9 = getelementptr inbounds nuw i8, ptr %3, i64 48
  %10 = load ptr, ptr %9, align 8, !invariant.load !3, !dereferenceable !6
  %11 = getelementptr inbounds nuw i8, ptr %3, i64 64
  %12 = load ptr, ptr %11, align 8, !invariant.load !3, !dereferenceable !4
  %13 = getelementptr inbounds nuw i8, ptr %3, i64 80
  %14 = load ptr, ptr %13, align 8, !invariant.load !3, !dereferenceable !6
  tail call void @llvm.experimental.noalias.scope.decl(metadata !7)
  tail call void @llvm.experimental.noalias.scope.decl(metadata !10)
  tail call void @llvm.experimental.noalias.scope.decl(metadata !12)
  tail call void @llvm.experimental.noalias.scope.decl(metadata !14)
  tail call void @llvm.experimental.noalias.scope.decl(metadata !16)
  tail call void @llvm.experimental.noalias.scope.decl(metadata !18)
  %15 = load i32, ptr %6, align 4, !invariant.load !3, !alias.scope !10, !noalias !20
  %.fr12 = freeze i32 %15
  %16 = sub i32 32, %.fr12
  %17 = icmp ult i32 %.fr12, 32
  %18 = icmp ult i32 %16, 32
  %19 = getelementptr inbounds nuw i8, ptr %6, i64 4
  %20 = load i32, ptr %19, align 4, !invariant.load !3, !alias.scope !10, !noalias !20
  %.fr = freeze i32 %20
  %21 = sub i32 32, %.fr
  %22 = icmp ult i32 %.fr, 32
  %23 = icmp ult i32 %21, 32
  %24 = getelementptr inbounds nuw i8, ptr %6, i64 8
  %25 = load i32, ptr %24, align 4, !invariant.load !3, !alias.scope !10, !noalias !20
  %.fr13 = freeze i32 %25
  %26 = sub i32 32, %.fr13
  %27 = icmp ult i32 %.fr13, 32
  %28 = icmp ult i32 %26, 32
  %29 = getelementptr inbounds nuw i8, ptr %6, i64 12
  %30 = load i32, ptr %29, align 4, !invariant.load !3, !alias.scope !10, !noalias !20
  %.fr14 = freeze i32 %30
  %31 = sub i32 32, %.fr14
  %32 = icmp ult i32 %.fr14, 32
  %33 = icmp ult i32 %31, 32
  %34 = load i32, ptr %4, align 4, !invariant.load !3, !alias.scope !7, !noalias !21
  %35 = load i32, ptr %12, align 4, !invariant.load !3, !alias.scope !16, !noalias !22
  %36 = add i32 %34, 1
  %37 = add i32 %36, %35
  br i1 %17, label %.split4.us, label %.split.preheader

.split.preheader:                                 ; preds = %1
  %broadcast.splatinsert80 = insertelement <8 x i32> poison, i32 %37, i64 0
  %broadcast.splat81 = shufflevector <8 x i32> %broadcast.splatinsert80, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert78 = insertelement <8 x i32> poison, i32 %31, i64 0
  %broadcast.splat79 = shufflevector <8 x i32> %broadcast.splatinsert78, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert76 = insertelement <8 x i32> poison, i32 %.fr14, i64 0
  %broadcast.splat77 = shufflevector <8 x i32> %broadcast.splatinsert76, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert74 = insertelement <8 x i32> poison, i32 %26, i64 0
  %broadcast.splat75 = shufflevector <8 x i32> %broadcast.splatinsert74, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert72 = insertelement <8 x i32> poison, i32 %.fr13, i64 0
  %broadcast.splat73 = shufflevector <8 x i32> %broadcast.splatinsert72, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert70 = insertelement <8 x i32> poison, i32 %21, i64 0
  %broadcast.splat71 = shufflevector <8 x i32> %broadcast.splatinsert70, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert68 = insertelement <8 x i32> poison, i32 %.fr, i64 0
  %broadcast.splat69 = shufflevector <8 x i32> %broadcast.splatinsert68, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert = insertelement <8 x i32> poison, i32 %16, i64 0
  %broadcast.splat = shufflevector <8 x i32> %broadcast.splatinsert, <8 x i32> poison, <8 x i32> zeroinitializer
  br label %.split

.split4.us:                                       ; preds = %1
  br i1 %18, label %.split4.us.split.us, label %.split.us.us.preheader

.split.us.us.preheader:                           ; preds = %.split4.us
  %broadcast.splatinsert98 = insertelement <8 x i32> poison, i32 %37, i64 0
  %broadcast.splat99 = shufflevector <8 x i32> %broadcast.splatinsert98, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert96 = insertelement <8 x i32> poison, i32 %31, i64 0
  %broadcast.splat97 = shufflevector <8 x i32> %broadcast.splatinsert96, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert94 = insertelement <8 x i32> poison, i32 %.fr14, i64 0
  %broadcast.splat95 = shufflevector <8 x i32> %broadcast.splatinsert94, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert92 = insertelement <8 x i32> poison, i32 %26, i64 0
  %broadcast.splat93 = shufflevector <8 x i32> %broadcast.splatinsert92, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert90 = insertelement <8 x i32> poison, i32 %.fr13, i64 0
  %broadcast.splat91 = shufflevector <8 x i32> %broadcast.splatinsert90, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert88 = insertelement <8 x i32> poison, i32 %21, i64 0
  %broadcast.splat89 = shufflevector <8 x i32> %broadcast.splatinsert88, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert86 = insertelement <8 x i32> poison, i32 %.fr, i64 0
  %broadcast.splat87 = shufflevector <8 x i32> %broadcast.splatinsert86, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert84 = insertelement <8 x i32> poison, i32 %.fr12, i64 0
  %broadcast.splat85 = shufflevector <8 x i32> %broadcast.splatinsert84, <8 x i32> poison, <8 x i32> zeroinitializer
  br label %.split.us.us

.split4.us.split.us:                              ; preds = %.split4.us
  br i1 %22, label %.split4.us.split.us.split.us, label %.split.us.us.us.preheader

.split.us.us.us.preheader:                        ; preds = %.split4.us.split.us
  %broadcast.splatinsert121 = insertelement <8 x i32> poison, i32 %37, i64 0
  %broadcast.splat122 = shufflevector <8 x i32> %broadcast.splatinsert121, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert119 = insertelement <8 x i32> poison, i32 %31, i64 0
  %broadcast.splat120 = shufflevector <8 x i32> %broadcast.splatinsert119, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert117 = insertelement <8 x i32> poison, i32 %.fr14, i64 0
  %broadcast.splat118 = shufflevector <8 x i32> %broadcast.splatinsert117, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert115 = insertelement <8 x i32> poison, i32 %26, i64 0
  %broadcast.splat116 = shufflevector <8 x i32> %broadcast.splatinsert115, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert113 = insertelement <8 x i32> poison, i32 %.fr13, i64 0
  %broadcast.splat114 = shufflevector <8 x i32> %broadcast.splatinsert113, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert111 = insertelement <8 x i32> poison, i32 %21, i64 0
  %broadcast.splat112 = shufflevector <8 x i32> %broadcast.splatinsert111, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert109 = insertelement <8 x i32> poison, i32 %16, i64 0
  %broadcast.splat110 = shufflevector <8 x i32> %broadcast.splatinsert109, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert107 = insertelement <8 x i32> poison, i32 %.fr12, i64 0
  %broadcast.splat108 = shufflevector <8 x i32> %broadcast.splatinsert107, <8 x i32> poison, <8 x i32> zeroinitializer
  br label %.split.us.us.us

.split4.us.split.us.split.us:                     ; preds = %.split4.us.split.us
  br i1 %23, label %.split4.us.split.us.split.us.split.us, label %.split.us.us.us.us.preheader

.split.us.us.us.us.preheader:                     ; preds = %.split4.us.split.us.split.us
  %broadcast.splatinsert144 = insertelement <8 x i32> poison, i32 %37, i64 0
  %broadcast.splat145 = shufflevector <8 x i32> %broadcast.splatinsert144, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert142 = insertelement <8 x i32> poison, i32 %31, i64 0
  %broadcast.splat143 = shufflevector <8 x i32> %broadcast.splatinsert142, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert140 = insertelement <8 x i32> poison, i32 %.fr14, i64 0
  %broadcast.splat141 = shufflevector <8 x i32> %broadcast.splatinsert140, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert138 = insertelement <8 x i32> poison, i32 %26, i64 0
  %broadcast.splat139 = shufflevector <8 x i32> %broadcast.splatinsert138, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert136 = insertelement <8 x i32> poison, i32 %.fr13, i64 0
  %broadcast.splat137 = shufflevector <8 x i32> %broadcast.splatinsert136, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert134 = insertelement <8 x i32> poison, i32 %.fr, i64 0
  %broadcast.splat135 = shufflevector <8 x i32> %broadcast.splatinsert134, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert132 = insertelement <8 x i32> poison, i32 %16, i64 0
  %broadcast.splat133 = shufflevector <8 x i32> %broadcast.splatinsert132, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert130 = insertelement <8 x i32> poison, i32 %.fr12, i64 0
  %broadcast.splat131 = shufflevector <8 x i32> %broadcast.splatinsert130, <8 x i32> poison, <8 x i32> zeroinitializer
  br label %.split.us.us.us.us

.split4.us.split.us.split.us.split.us:            ; preds = %.split4.us.split.us.split.us
  br i1 %27, label %.split4.us.split.us.split.us.split.us.split.us, label %.split.us.us.us.us.us.preheader

.split.us.us.us.us.us.preheader:                  ; preds = %.split4.us.split.us.split.us.split.us
  %broadcast.splatinsert167 = insertelement <8 x i32> poison, i32 %37, i64 0
  %broadcast.splat168 = shufflevector <8 x i32> %broadcast.splatinsert167, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert165 = insertelement <8 x i32> poison, i32 %31, i64 0
  %broadcast.splat166 = shufflevector <8 x i32> %broadcast.splatinsert165, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert163 = insertelement <8 x i32> poison, i32 %.fr14, i64 0
  %broadcast.splat164 = shufflevector <8 x i32> %broadcast.splatinsert163, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert161 = insertelement <8 x i32> poison, i32 %26, i64 0
  %broadcast.splat162 = shufflevector <8 x i32> %broadcast.splatinsert161, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert159 = insertelement <8 x i32> poison, i32 %21, i64 0
  %broadcast.splat160 = shufflevector <8 x i32> %broadcast.splatinsert159, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert157 = insertelement <8 x i32> poison, i32 %.fr, i64 0
  %broadcast.splat158 = shufflevector <8 x i32> %broadcast.splatinsert157, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert155 = insertelement <8 x i32> poison, i32 %16, i64 0
  %broadcast.splat156 = shufflevector <8 x i32> %broadcast.splatinsert155, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert153 = insertelement <8 x i32> poison, i32 %.fr12, i64 0
  %broadcast.splat154 = shufflevector <8 x i32> %broadcast.splatinsert153, <8 x i32> poison, <8 x i32> zeroinitializer
  br label %.split.us.us.us.us.us

.split4.us.split.us.split.us.split.us.split.us:   ; preds = %.split4.us.split.us.split.us.split.us
  br i1 %28, label %.split4.us.split.us.split.us.split.us.split.us.split.us, label %.split.us.us.us.us.us.us.preheader

.split.us.us.us.us.us.us.preheader:               ; preds = %.split4.us.split.us.split.us.split.us.split.us
  %broadcast.splatinsert190 = insertelement <8 x i32> poison, i32 %37, i64 0
  %broadcast.splat191 = shufflevector <8 x i32> %broadcast.splatinsert190, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert188 = insertelement <8 x i32> poison, i32 %31, i64 0
  %broadcast.splat189 = shufflevector <8 x i32> %broadcast.splatinsert188, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert186 = insertelement <8 x i32> poison, i32 %.fr14, i64 0
  %broadcast.splat187 = shufflevector <8 x i32> %broadcast.splatinsert186, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert184 = insertelement <8 x i32> poison, i32 %.fr13, i64 0
  %broadcast.splat185 = shufflevector <8 x i32> %broadcast.splatinsert184, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert182 = insertelement <8 x i32> poison, i32 %21, i64 0
  %broadcast.splat183 = shufflevector <8 x i32> %broadcast.splatinsert182, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert180 = insertelement <8 x i32> poison, i32 %.fr, i64 0
  %broadcast.splat181 = shufflevector <8 x i32> %broadcast.splatinsert180, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert178 = insertelement <8 x i32> poison, i32 %16, i64 0
  %broadcast.splat179 = shufflevector <8 x i32> %broadcast.splatinsert178, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert176 = insertelement <8 x i32> poison, i32 %.fr12, i64 0
  %broadcast.splat177 = shufflevector <8 x i32> %broadcast.splatinsert176, <8 x i32> poison, <8 x i32> zeroinitializer
  br label %.split.us.us.us.us.us.us

.split4.us.split.us.split.us.split.us.split.us.split.us: ; preds = %.split4.us.split.us.split.us.split.us.split.us
  br i1 %32, label %.split4.us.split.us.split.us.split.us.split.us.split.us.split.us, label %.split.us.us.us.us.us.us.us.preheader

.split.us.us.us.us.us.us.us.preheader:            ; preds = %.split4.us.split.us.split.us.split.us.split.us.split.us
  %broadcast.splatinsert213 = insertelement <8 x i32> poison, i32 %37, i64 0
  %broadcast.splat214 = shufflevector <8 x i32> %broadcast.splatinsert213, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert211 = insertelement <8 x i32> poison, i32 %31, i64 0
  %broadcast.splat212 = shufflevector <8 x i32> %broadcast.splatinsert211, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert209 = insertelement <8 x i32> poison, i32 %26, i64 0
  %broadcast.splat210 = shufflevector <8 x i32> %broadcast.splatinsert209, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert207 = insertelement <8 x i32> poison, i32 %.fr13, i64 0
  %broadcast.splat208 = shufflevector <8 x i32> %broadcast.splatinsert207, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert205 = insertelement <8 x i32> poison, i32 %21, i64 0
  %broadcast.splat206 = shufflevector <8 x i32> %broadcast.splatinsert205, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert203 = insertelement <8 x i32> poison, i32 %.fr, i64 0
  %broadcast.splat204 = shufflevector <8 x i32> %broadcast.splatinsert203, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert201 = insertelement <8 x i32> poison, i32 %16, i64 0
  %broadcast.splat202 = shufflevector <8 x i32> %broadcast.splatinsert201, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert199 = insertelement <8 x i32> poison, i32 %.fr12, i64 0
  %broadcast.splat200 = shufflevector <8 x i32> %broadcast.splatinsert199, <8 x i32> poison, <8 x i32> zeroinitializer
  br label %.split.us.us.us.us.us.us.us

.split4.us.split.us.split.us.split.us.split.us.split.us.split.us: ; preds = %.split4.us.split.us.split.us.split.us.split.us.split.us
  br i1 %33, label %.split.us.us.us.us.us.us.us.us.us.preheader, label %.split.us.us.us.us.us.us.us.us.preheader

.split.us.us.us.us.us.us.us.us.preheader:         ; preds = %.split4.us.split.us.split.us.split.us.split.us.split.us.split.us
  %broadcast.splatinsert236 = insertelement <8 x i32> poison, i32 %37, i64 0
  %broadcast.splat237 = shufflevector <8 x i32> %broadcast.splatinsert236, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert234 = insertelement <8 x i32> poison, i32 %.fr14, i64 0
  %broadcast.splat235 = shufflevector <8 x i32> %broadcast.splatinsert234, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert232 = insertelement <8 x i32> poison, i32 %26, i64 0
  %broadcast.splat233 = shufflevector <8 x i32> %broadcast.splatinsert232, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert230 = insertelement <8 x i32> poison, i32 %.fr13, i64 0
  %broadcast.splat231 = shufflevector <8 x i32> %broadcast.splatinsert230, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert228 = insertelement <8 x i32> poison, i32 %21, i64 0
  %broadcast.splat229 = shufflevector <8 x i32> %broadcast.splatinsert228, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert226 = insertelement <8 x i32> poison, i32 %.fr, i64 0
  %broadcast.splat227 = shufflevector <8 x i32> %broadcast.splatinsert226, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert224 = insertelement <8 x i32> poison, i32 %16, i64 0
  %broadcast.splat225 = shufflevector <8 x i32> %broadcast.splatinsert224, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert222 = insertelement <8 x i32> poison, i32 %.fr12, i64 0
  %broadcast.splat223 = shufflevector <8 x i32> %broadcast.splatinsert222, <8 x i32> poison, <8 x i32> zeroinitializer
  br label %.split.us.us.us.us.us.us.us.us

.split.us.us.us.us.us.us.us.us.us.preheader:      ; preds = %.split4.us.split.us.split.us.split.us.split.us.split.us.split.us
  %broadcast.splatinsert261 = insertelement <8 x i32> poison, i32 %37, i64 0
  %broadcast.splat262 = shufflevector <8 x i32> %broadcast.splatinsert261, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert259 = insertelement <8 x i32> poison, i32 %31, i64 0
  %broadcast.splat260 = shufflevector <8 x i32> %broadcast.splatinsert259, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert257 = insertelement <8 x i32> poison, i32 %.fr14, i64 0
  %broadcast.splat258 = shufflevector <8 x i32> %broadcast.splatinsert257, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert255 = insertelement <8 x i32> poison, i32 %26, i64 0
  %broadcast.splat256 = shufflevector <8 x i32> %broadcast.splatinsert255, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert253 = insertelement <8 x i32> poison, i32 %.fr13, i64 0
  %broadcast.splat254 = shufflevector <8 x i32> %broadcast.splatinsert253, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert251 = insertelement <8 x i32> poison, i32 %21, i64 0
  %broadcast.splat252 = shufflevector <8 x i32> %broadcast.splatinsert251, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert249 = insertelement <8 x i32> poison, i32 %.fr, i64 0
  %broadcast.splat250 = shufflevector <8 x i32> %broadcast.splatinsert249, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert247 = insertelement <8 x i32> poison, i32 %16, i64 0
  %broadcast.splat248 = shufflevector <8 x i32> %broadcast.splatinsert247, <8 x i32> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert245 = insertelement <8 x i32> poison, i32 %.fr12, i64 0
  %broadcast.splat246 = shufflevector <8 x i32> %broadcast.splatinsert245, <8 x i32> poison, <8 x i32> zeroinitializer
  br label %.split.us.us.us.us.us.us.us.us.us

.split.us.us.us.us.us.us.us.us.us:                ; preds = %.split.us.us.us.us.us.us.us.us.us.preheader, %.split.us.us.us.us.us.us.us.us.us
  %38 = phi i64 [ %89, %.split.us.us.us.us.us.us.us.us.us ], [ 0, %.split.us.us.us.us.us.us.us.us.us.preheader ]
  %39 = shl nuw nsw i64 %38, 4
  %40 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %39
  %wide.load265 = load <8 x i32>, ptr %40, align 4, !invariant.load !3, !alias.scope !12, !noalias !23
  %41 = shl <8 x i32> %wide.load265, %broadcast.splat246
  %42 = lshr <8 x i32> %wide.load265, %broadcast.splat248
  %43 = getelementptr inbounds nuw [4 x i8], ptr %10, i64 %39
  %wide.load266 = load <8 x i32>, ptr %43, align 4, !invariant.load !3, !alias.scope !14, !noalias !24
  %44 = or disjoint <8 x i32> %41, %42
  %45 = add <8 x i32> %wide.load266, %wide.load265
  %46 = xor <8 x i32> %44, %45
  %47 = shl <8 x i32> %46, %broadcast.splat250
  %48 = lshr <8 x i32> %46, %broadcast.splat252
  %49 = or disjoint <8 x i32> %47, %48
  %50 = add <8 x i32> %46, %45
  %51 = xor <8 x i32> %49, %50
  %52 = shl <8 x i32> %51, %broadcast.splat254
  %53 = lshr <8 x i32> %51, %broadcast.splat256
  %54 = or disjoint <8 x i32> %52, %53
  %55 = add <8 x i32> %51, %50
  %56 = xor <8 x i32> %54, %55
  %57 = shl <8 x i32> %56, %broadcast.splat258
  %58 = lshr <8 x i32> %56, %broadcast.splat260
  %59 = add <8 x i32> %56, %55
  %60 = or disjoint <8 x i32> %57, %58
  %61 = xor <8 x i32> %60, %59
  %62 = add <8 x i32> %broadcast.splat262, %61
  %63 = getelementptr inbounds nuw [4 x i8], ptr %14, i64 %39
  store <8 x i32> %62, ptr %63, align 4, !alias.scope !18, !noalias !25
  %64 = or disjoint i64 %39, 8
  %65 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %64
  %wide.load265.1 = load <8 x i32>, ptr %65, align 4, !invariant.load !3, !alias.scope !12, !noalias !23
  %66 = shl <8 x i32> %wide.load265.1, %broadcast.splat246
  %67 = lshr <8 x i32> %wide.load265.1, %broadcast.splat248
  %68 = getelementptr inbounds nuw [4 x i8], ptr %10, i64 %64
  %wide.load266.1 = load <8 x i32>, ptr %68, align 4, !invariant.load !3, !alias.scope !14, !noalias !24
  %69 = or disjoint <8 x i32> %66, %67
  %70 = add <8 x i32> %wide.load266.1, %wide.load265.1
  %71 = xor <8 x i32> %69, %70
  %72 = shl <8 x i32> %71, %broadcast.splat250
  %73 = lshr <8 x i32> %71, %broadcast.splat252
  %74 = or disjoint <8 x i32> %72, %73
  %75 = add <8 x i32> %71, %70
  %76 = xor <8 x i32> %74, %75
  %77 = shl <8 x i32> %76, %broadcast.splat254
  %78 = lshr <8 x i32> %76, %broadcast.splat256
  %79 = or disjoint <8 x i32> %77, %78
  %80 = add <8 x i32> %76, %75
  %81 = xor <8 x i32> %79, %80
  %82 = shl <8 x i32> %81, %broadcast.splat258
  %83 = lshr <8 x i32> %81, %broadcast.splat260
  %84 = add <8 x i32> %81, %80
  %85 = or disjoint <8 x i32> %82, %83
  %86 = xor <8 x i32> %85, %84
  %87 = add <8 x i32> %broadcast.splat262, %86
  %88 = getelementptr inbounds nuw [4 x i8], ptr %14, i64 %64
  store <8 x i32> %87, ptr %88, align 4, !alias.scope !18, !noalias !25
  %89 = add nuw nsw i64 %38, 1
  %exitcond39.not = icmp eq i64 %89, 16
  br i1 %exitcond39.not, label %broadcast_add_fusion.6_wrapped.exit, label %.split.us.us.us.us.us.us.us.us.us, !llvm.loop !26

.split.us.us.us.us.us.us.us.us:                   ; preds = %.split.us.us.us.us.us.us.us.us.preheader, %.split.us.us.us.us.us.us.us.us
  %90 = phi i64 [ %137, %.split.us.us.us.us.us.us.us.us ], [ 0, %.split.us.us.us.us.us.us.us.us.preheader ]
  %91 = shl nuw nsw i64 %90, 4
  %92 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %91
  %wide.load240 = load <8 x i32>, ptr %92, align 4, !invariant.load !3, !alias.scope !12, !noalias !23
  %93 = shl <8 x i32> %wide.load240, %broadcast.splat223
  %94 = lshr <8 x i32> %wide.load240, %broadcast.splat225
  %95 = getelementptr inbounds nuw [4 x i8], ptr %10, i64 %91
  %wide.load241 = load <8 x i32>, ptr %95, align 4, !invariant.load !3, !alias.scope !14, !noalias !24
  %96 = or disjoint <8 x i32> %93, %94
  %97 = add <8 x i32> %wide.load241, %wide.load240
  %98 = xor <8 x i32> %96, %97
  %99 = shl <8 x i32> %98, %broadcast.splat227
  %100 = lshr <8 x i32> %98, %broadcast.splat229
  %101 = or disjoint <8 x i32> %99, %100
  %102 = add <8 x i32> %98, %97
  %103 = xor <8 x i32> %101, %102
  %104 = shl <8 x i32> %103, %broadcast.splat231
  %105 = lshr <8 x i32> %103, %broadcast.splat233
  %106 = or disjoint <8 x i32> %104, %105
  %107 = add <8 x i32> %103, %102
  %108 = xor <8 x i32> %106, %107
  %109 = shl <8 x i32> %108, %broadcast.splat235
  %110 = add <8 x i32> %108, %107
  %111 = xor <8 x i32> %109, %110
  %112 = add <8 x i32> %broadcast.splat237, %111
  %113 = getelementptr inbounds nuw [4 x i8], ptr %14, i64 %91
  store <8 x i32> %112, ptr %113, align 4, !alias.scope !18, !noalias !25
  %114 = or disjoint i64 %91, 8
  %115 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %114
  %wide.load240.1 = load <8 x i32>, ptr %115, align 4, !invariant.load !3, !alias.scope !12, !noalias !23
  %116 = shl <8 x i32> %wide.load240.1, %broadcast.splat223
  %117 = lshr <8 x i32> %wide.load240.1, %broadcast.splat225
  %118 = getelementptr inbounds nuw [4 x i8], ptr %10, i64 %114
  %wide.load241.1 = load <8 x i32>, ptr %118, align 4, !invariant.load !3, !alias.scope !14, !noalias !24
  %119 = or disjoint <8 x i32> %116, %117
  %120 = add <8 x i32> %wide.load241.1, %wide.load240.1
  %121 = xor <8 x i32> %119, %120
  %122 = shl <8 x i32> %121, %broadcast.splat227
  %123 = lshr <8 x i32> %121, %broadcast.splat229
  %124 = or disjoint <8 x i32> %122, %123
  %125 = add <8 x i32> %121, %120
  %126 = xor <8 x i32> %124, %125
  %127 = shl <8 x i32> %126, %broadcast.splat231
  %128 = lshr <8 x i32> %126, %broadcast.splat233
  %129 = or disjoint <8 x i32> %127, %128
  %130 = add <8 x i32> %126, %125
  %131 = xor <8 x i32> %129, %130
  %132 = shl <8 x i32> %131, %broadcast.splat235
  %133 = add <8 x i32> %131, %130
  %134 = xor <8 x i32> %132, %133
  %135 = add <8 x i32> %broadcast.splat237, %134
  %136 = getelementptr inbounds nuw [4 x i8], ptr %14, i64 %114
  store <8 x i32> %135, ptr %136, align 4, !alias.scope !18, !noalias !25
  %137 = add nuw nsw i64 %90, 1
  %exitcond37.not = icmp eq i64 %137, 16
  br i1 %exitcond37.not, label %broadcast_add_fusion.6_wrapped.exit, label %.split.us.us.us.us.us.us.us.us, !llvm.loop !26

.split.us.us.us.us.us.us.us:                      ; preds = %.split.us.us.us.us.us.us.us.preheader, %.split.us.us.us.us.us.us.us
  %138 = phi i64 [ %187, %.split.us.us.us.us.us.us.us ], [ 0, %.split.us.us.us.us.us.us.us.preheader ]
  %139 = shl nuw nsw i64 %138, 4
  %140 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %139
  %wide.load217 = load <8 x i32>, ptr %140, align 4, !invariant.load !3, !alias.scope !12, !noalias !23
  %141 = shl <8 x i32> %wide.load217, %broadcast.splat200
  %142 = lshr <8 x i32> %wide.load217, %broadcast.splat202
  %143 = getelementptr inbounds nuw [4 x i8], ptr %10, i64 %139
  %wide.load218 = load <8 x i32>, ptr %143, align 4, !invariant.load !3, !alias.scope !14, !noalias !24
  %144 = or disjoint <8 x i32> %141, %142
  %145 = add <8 x i32> %wide.load218, %wide.load217
  %146 = xor <8 x i32> %144, %145
  %147 = shl <8 x i32> %146, %broadcast.splat204
  %148 = lshr <8 x i32> %146, %broadcast.splat206
  %149 = or disjoint <8 x i32> %147, %148
  %150 = add <8 x i32> %146, %145
  %151 = xor <8 x i32> %149, %150
  %152 = shl <8 x i32> %151, %broadcast.splat208
  %153 = lshr <8 x i32> %151, %broadcast.splat210
  %154 = or disjoint <8 x i32> %152, %153
  %155 = add <8 x i32> %151, %150
  %156 = xor <8 x i32> %154, %155
  %157 = lshr <8 x i32> %156, %broadcast.splat212
  %158 = select i1 %33, <8 x i32> %157, <8 x i32> zeroinitializer
  %159 = add <8 x i32> %156, %155
  %160 = xor <8 x i32> %158, %159
  %161 = add <8 x i32> %broadcast.splat214, %160
  %162 = getelementptr inbounds nuw [4 x i8], ptr %14, i64 %139
  store <8 x i32> %161, ptr %162, align 4, !alias.scope !18, !noalias !25
  %163 = or disjoint i64 %139, 8
  %164 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %163
  %wide.load217.1 = load <8 x i32>, ptr %164, align 4, !invariant.load !3, !alias.scope !12, !noalias !23
  %165 = shl <8 x i32> %wide.load217.1, %broadcast.splat200
  %166 = lshr <8 x i32> %wide.load217.1, %broadcast.splat202
  %167 = getelementptr inbounds nuw [4 x i8], ptr %10, i64 %163
  %wide.load218.1 = load <8 x i32>, ptr %167, align 4, !invariant.load !3, !alias.scope !14, !noalias !24
  %168 = or disjoint <8 x i32> %165, %166
  %169 = add <8 x i32> %wide.load218.1, %wide.load217.1
  %170 = xor <8 x i32> %168, %169
  %171 = shl <8 x i32> %170, %broadcast.splat204
  %172 = lshr <8 x i32> %170, %broadcast.splat206
  %173 = or disjoint <8 x i32> %171, %172
  %174 = add <8 x i32> %170, %169
  %175 = xor <8 x i32> %173, %174
  %176 = shl <8 x i32> %175, %broadcast.splat208
  %177 = lshr <8 x i32> %175, %broadcast.splat210
  %178 = or disjoint <8 x i32> %176, %177
  %179 = add <8 x i32> %175, %174
  %180 = xor <8 x i32> %178, %179
  %181 = lshr <8 x i32> %180, %broadcast.splat212
  %182 = select i1 %33, <8 x i32> %181, <8 x i32> zeroinitializer
  %183 = add <8 x i32> %180, %179
  %184 = xor <8 x i32> %182, %183
  %185 = add <8 x i32> %broadcast.splat214, %184
  %186 = getelementptr inbounds nuw [4 x i8], ptr %14, i64 %163
  store <8 x i32> %185, ptr %186, align 4, !alias.scope !18, !noalias !25
  %187 = add nuw nsw i64 %138, 1
  %exitcond35.not = icmp eq i64 %187, 16
  br i1 %exitcond35.not, label %broadcast_add_fusion.6_wrapped.exit, label %.split.us.us.us.us.us.us.us, !llvm.loop !26

.split.us.us.us.us.us.us:                         ; preds = %.split.us.us.us.us.us.us.preheader, %.split.us.us.us.us.us.us
  %188 = phi i64 [ %239, %.split.us.us.us.us.us.us ], [ 0, %.split.us.us.us.us.us.us.preheader ]
  %189 = shl nuw nsw i64 %188, 4
  %190 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %189
  %wide.load194 = load <8 x i32>, ptr %190, align 4, !invariant.load !3, !alias.scope !12, !noalias !23
  %191 = shl <8 x i32> %wide.load194, %broadcast.splat177
  %192 = lshr <8 x i32> %wide.load194, %broadcast.splat179
  %193 = getelementptr inbounds nuw [4 x i8], ptr %10, i64 %189
  %wide.load195 = load <8 x i32>, ptr %193, align 4, !invariant.load !3, !alias.scope !14, !noalias !24
  %194 = or disjoint <8 x i32> %191, %192
  %195 = add <8 x i32> %wide.load195, %wide.load194
  %196 = xor <8 x i32> %194, %195
  %197 = shl <8 x i32> %196, %broadcast.splat181
  %198 = lshr <8 x i32> %196, %broadcast.splat183
  %199 = or disjoint <8 x i32> %197, %198
  %200 = add <8 x i32> %196, %195
  %201 = xor <8 x i32> %199, %200
  %202 = shl <8 x i32> %201, %broadcast.splat185
  %203 = add <8 x i32> %201, %200
  %204 = xor <8 x i32> %202, %203
  %205 = shl <8 x i32> %204, %broadcast.splat187
  %206 = select i1 %32, <8 x i32> %205, <8 x i32> zeroinitializer
  %207 = lshr <8 x i32> %204, %broadcast.splat189
  %208 = select i1 %33, <8 x i32> %207, <8 x i32> zeroinitializer
  %209 = add <8 x i32> %204, %203
  %210 = or <8 x i32> %206, %208
  %211 = xor <8 x i32> %210, %209
  %212 = add <8 x i32> %broadcast.splat191, %211
  %213 = getelementptr inbounds nuw [4 x i8], ptr %14, i64 %189
  store <8 x i32> %212, ptr %213, align 4, !alias.scope !18, !noalias !25
  %214 = or disjoint i64 %189, 8
  %215 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %214
  %wide.load194.1 = load <8 x i32>, ptr %215, align 4, !invariant.load !3, !alias.scope !12, !noalias !23
  %216 = shl <8 x i32> %wide.load194.1, %broadcast.splat177
  %217 = lshr <8 x i32> %wide.load194.1, %broadcast.splat179
  %218 = getelementptr inbounds nuw [4 x i8], ptr %10, i64 %214
  %wide.load195.1 = load <8 x i32>, ptr %218, align 4, !invariant.load !3, !alias.scope !14, !noalias !24
  %219 = or disjoint <8 x i32> %216, %217
  %220 = add <8 x i32> %wide.load195.1, %wide.load194.1
  %221 = xor <8 x i32> %219, %220
  %222 = shl <8 x i32> %221, %broadcast.splat181
  %223 = lshr <8 x i32> %221, %broadcast.splat183
  %224 = or disjoint <8 x i32> %222, %223
  %225 = add <8 x i32> %221, %220
  %226 = xor <8 x i32> %224, %225
  %227 = shl <8 x i32> %226, %broadcast.splat185
  %228 = add <8 x i32> %226, %225
  %229 = xor <8 x i32> %227, %228
  %230 = shl <8 x i32> %229, %broadcast.splat187
  %231 = select i1 %32, <8 x i32> %230, <8 x i32> zeroinitializer
  %232 = lshr <8 x i32> %229, %broadcast.splat189
  %233 = select i1 %33, <8 x i32> %232, <8 x i32> zeroinitializer
  %234 = add <8 x i32> %229, %228
  %235 = or <8 x i32> %231, %233
  %236 = xor <8 x i32> %235, %234
  %237 = add <8 x i32> %broadcast.splat191, %236
  %238 = getelementptr inbounds nuw [4 x i8], ptr %14, i64 %214
  store <8 x i32> %237, ptr %238, align 4, !alias.scope !18, !noalias !25
  %239 = add nuw nsw i64 %188, 1
  %exitcond33.not = icmp eq i64 %239, 16
  br i1 %exitcond33.not, label %broadcast_add_fusion.6_wrapped.exit, label %.split.us.us.us.us.us.us, !llvm.loop !26

.split.us.us.us.us.us:                            ; preds = %.split.us.us.us.us.us.preheader, %.split.us.us.us.us.us
  %240 = phi i64 [ %293, %.split.us.us.us.us.us ], [ 0, %.split.us.us.us.us.us.preheader ]
  %241 = shl nuw nsw i64 %240, 4
  %242 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %241
  %wide.load171 = load <8 x i32>, ptr %242, align 4, !invariant.load !3, !alias.scope !12, !noalias !23
  %243 = shl <8 x i32> %wide.load171, %broadcast.splat154
  %244 = lshr <8 x i32> %wide.load171, %broadcast.splat156
  %245 = getelementptr inbounds nuw [4 x i8], ptr %10, i64 %241
  %wide.load172 = load <8 x i32>, ptr %245, align 4, !invariant.load !3, !alias.scope !14, !noalias !24
  %246 = or disjoint <8 x i32> %243, %244
  %247 = add <8 x i32> %wide.load172, %wide.load171
  %248 = xor <8 x i32> %246, %247
  %249 = shl <8 x i32> %248, %broadcast.splat158
  %250 = lshr <8 x i32> %248, %broadcast.splat160
  %251 = or disjoint <8 x i32> %249, %250
  %252 = add <8 x i32> %248, %247
  %253 = xor <8 x i32> %251, %252
  %254 = lshr <8 x i32> %253, %broadcast.splat162
  %255 = select i1 %28, <8 x i32> %254, <8 x i32> zeroinitializer
  %256 = add <8 x i32> %253, %252
  %257 = xor <8 x i32> %255, %256
  %258 = shl <8 x i32> %257, %broadcast.splat164
  %259 = select i1 %32, <8 x i32> %258, <8 x i32> zeroinitializer
  %260 = lshr <8 x i32> %257, %broadcast.splat166
  %261 = select i1 %33, <8 x i32> %260, <8 x i32> zeroinitializer
  %262 = add <8 x i32> %257, %256
  %263 = or <8 x i32> %259, %261
  %264 = xor <8 x i32> %263, %262
  %265 = add <8 x i32> %broadcast.splat168, %264
  %266 = getelementptr inbounds nuw [4 x i8], ptr %14, i64 %241
  store <8 x i32> %265, ptr %266, align 4, !alias.scope !18, !noalias !25
  %267 = or disjoint i64 %241, 8
  %268 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %267
  %wide.load171.1 = load <8 x i32>, ptr %268, align 4, !invariant.load !3, !alias.scope !12, !noalias !23
  %269 = shl <8 x i32> %wide.load171.1, %broadcast.splat154
  %270 = lshr <8 x i32> %wide.load171.1, %broadcast.splat156
  %271 = getelementptr inbounds nuw [4 x i8], ptr %10, i64 %267
  %wide.load172.1 = load <8 x i32>, ptr %271, align 4, !invariant.load !3, !alias.scope !14, !noalias !24
  %272 = or disjoint <8 x i32> %269, %270
  %273 = add <8 x i32> %wide.load172.1, %wide.load171.1
  %274 = xor <8 x i32> %272, %273
  %275 = shl <8 x i32> %274, %broadcast.splat158
  %276 = lshr <8 x i32> %274, %broadcast.splat160
  %277 = or disjoint <8 x i32> %275, %276
  %278 = add <8 x i32> %274, %273
  %279 = xor <8 x i32> %277, %278
  %280 = lshr <8 x i32> %279, %broadcast.splat162
  %281 = select i1 %28, <8 x i32> %280, <8 x i32> zeroinitializer
  %282 = add <8 x i32> %279, %278
  %283 = xor <8 x i32> %281, %282
  %284 = shl <8 x i32> %283, %broadcast.splat164
  %285 = select i1 %32, <8 x i32> %284, <8 x i32> zeroinitializer
  %286 = lshr <8 x i32> %283, %broadcast.splat166
  %287 = select i1 %33, <8 x i32> %286, <8 x i32> zeroinitializer
  %288 = add <8 x i32> %283, %282
  %289 = or <8 x i32> %285, %287
  %290 = xor <8 x i32> %289, %288
  %291 = add <8 x i32> %broadcast.splat168, %290
  %292 = getelementptr inbounds nuw [4 x i8], ptr %14, i64 %267
  store <8 x i32> %291, ptr %292, align 4, !alias.scope !18, !noalias !25
  %293 = add nuw nsw i64 %240, 1
  %exitcond31.not = icmp eq i64 %293, 16
  br i1 %exitcond31.not, label %broadcast_add_fusion.6_wrapped.exit, label %.split.us.us.us.us.us, !llvm.loop !26

.split.us.us.us.us:                               ; preds = %.split.us.us.us.us.preheader, %.split.us.us.us.us
  %294 = phi i64 [ %349, %.split.us.us.us.us ], [ 0, %.split.us.us.us.us.preheader ]
  %295 = shl nuw nsw i64 %294, 4
  %296 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %295
  %wide.load148 = load <8 x i32>, ptr %296, align 4, !invariant.load !3, !alias.scope !12, !noalias !23
  %297 = shl <8 x i32> %wide.load148, %broadcast.splat131
  %298 = lshr <8 x i32> %wide.load148, %broadcast.splat133
  %299 = getelementptr inbounds nuw [4 x i8], ptr %10, i64 %295
  %wide.load149 = load <8 x i32>, ptr %299, align 4, !invariant.load !3, !alias.scope !14, !noalias !24
  %300 = or disjoint <8 x i32> %297, %298
  %301 = add <8 x i32> %wide.load149, %wide.load148
  %302 = xor <8 x i32> %300, %301
  %303 = shl <8 x i32> %302, %broadcast.splat135
  %304 = add <8 x i32> %302, %301
  %305 = xor <8 x i32> %303, %304
  %306 = shl <8 x i32> %305, %broadcast.splat137
  %307 = select i1 %27, <8 x i32> %306, <8 x i32> zeroinitializer
  %308 = lshr <8 x i32> %305, %broadcast.splat139
  %309 = select i1 %28, <8 x i32> %308, <8 x i32> zeroinitializer
  %310 = or <8 x i32> %307, %309
  %311 = add <8 x i32> %305, %304
  %312 = xor <8 x i32> %310, %311
  %313 = shl <8 x i32> %312, %broadcast.splat141
  %314 = select i1 %32, <8 x i32> %313, <8 x i32> zeroinitializer
  %315 = lshr <8 x i32> %312, %broadcast.splat143
  %316 = select i1 %33, <8 x i32> %315, <8 x i32> zeroinitializer
  %317 = add <8 x i32> %312, %311
  %318 = or <8 x i32> %314, %316
  %319 = xor <8 x i32> %318, %317
  %320 = add <8 x i32> %broadcast.splat145, %319
  %321 = getelementptr inbounds nuw [4 x i8], ptr %14, i64 %295
  store <8 x i32> %320, ptr %321, align 4, !alias.scope !18, !noalias !25
  %322 = or disjoint i64 %295, 8
  %323 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %322
  %wide.load148.1 = load <8 x i32>, ptr %323, align 4, !invariant.load !3, !alias.scope !12, !noalias !23
  %324 = shl <8 x i32> %wide.load148.1, %broadcast.splat131
  %325 = lshr <8 x i32> %wide.load148.1, %broadcast.splat133
  %326 = getelementptr inbounds nuw [4 x i8], ptr %10, i64 %322
  %wide.load149.1 = load <8 x i32>, ptr %326, align 4, !invariant.load !3, !alias.scope !14, !noalias !24
  %327 = or disjoint <8 x i32> %324, %325
  %328 = add <8 x i32> %wide.load149.1, %wide.load148.1
  %329 = xor <8 x i32> %327, %328
  %330 = shl <8 x i32> %329, %broadcast.splat135
  %331 = add <8 x i32> %329, %328
  %332 = xor <8 x i32> %330, %331
  %333 = shl <8 x i32> %332, %broadcast.splat137
  %334 = select i1 %27, <8 x i32> %333, <8 x i32> zeroinitializer
  %335 = lshr <8 x i32> %332, %broadcast.splat139
  %336 = select i1 %28, <8 x i32> %335, <8 x i32> zeroinitializer
  %337 = or <8 x i32> %334, %336
  %338 = add <8 x i32> %332, %331
  %339 = xor <8 x i32> %337, %338
  %340 = shl <8 x i32> %339, %broadcast.splat141
  %341 = select i1 %32, <8 x i32> %340, <8 x i32> zeroinitializer
  %342 = lshr <8 x i32> %339, %broadcast.splat143
  %343 = select i1 %33, <8 x i32> %342, <8 x i32> zeroinitializer
  %344 = add <8 x i32> %339, %338
  %345 = or <8 x i32> %341, %343
  %346 = xor <8 x i32> %345, %344
  %347 = add <8 x i32> %broadcast.splat145, %346
  %348 = getelementptr inbounds nuw [4 x i8], ptr %14, i64 %322
  store <8 x i32> %347, ptr %348, align 4, !alias.scope !18, !noalias !25
  %349 = add nuw nsw i64 %294, 1
  %exitcond29.not = icmp eq i64 %349, 16
  br i1 %exitcond29.not, label %broadcast_add_fusion.6_wrapped.exit, label %.split.us.us.us.us, !llvm.loop !26

.split.us.us.us:                                  ; preds = %.split.us.us.us.preheader, %.split.us.us.us
  %350 = phi i64 [ %407, %.split.us.us.us ], [ 0, %.split.us.us.us.preheader ]
  %351 = shl nuw nsw i64 %350, 4
  %352 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %351
  %wide.load125 = load <8 x i32>, ptr %352, align 4, !invariant.load !3, !alias.scope !12, !noalias !23
  %353 = shl <8 x i32> %wide.load125, %broadcast.splat108
  %354 = lshr <8 x i32> %wide.load125, %broadcast.splat110
  %355 = getelementptr inbounds nuw [4 x i8], ptr %10, i64 %351
  %wide.load126 = load <8 x i32>, ptr %355, align 4, !invariant.load !3, !alias.scope !14, !noalias !24
  %356 = or disjoint <8 x i32> %353, %354
  %357 = add <8 x i32> %wide.load126, %wide.load125
  %358 = xor <8 x i32> %356, %357
  %359 = lshr <8 x i32> %358, %broadcast.splat112
  %360 = select i1 %23, <8 x i32> %359, <8 x i32> zeroinitializer
  %361 = add <8 x i32> %358, %357
  %362 = xor <8 x i32> %360, %361
  %363 = shl <8 x i32> %362, %broadcast.splat114
  %364 = select i1 %27, <8 x i32> %363, <8 x i32> zeroinitializer
  %365 = lshr <8 x i32> %362, %broadcast.splat116
  %366 = select i1 %28, <8 x i32> %365, <8 x i32> zeroinitializer
  %367 = or <8 x i32> %364, %366
  %368 = add <8 x i32> %362, %361
  %369 = xor <8 x i32> %367, %368
  %370 = shl <8 x i32> %369, %broadcast.splat118
  %371 = select i1 %32, <8 x i32> %370, <8 x i32> zeroinitializer
  %372 = lshr <8 x i32> %369, %broadcast.splat120
  %373 = select i1 %33, <8 x i32> %372, <8 x i32> zeroinitializer
  %374 = add <8 x i32> %369, %368
  %375 = or <8 x i32> %371, %373
  %376 = xor <8 x i32> %375, %374
  %377 = add <8 x i32> %broadcast.splat122, %376
  %378 = getelementptr inbounds nuw [4 x i8], ptr %14, i64 %351
  store <8 x i32> %377, ptr %378, align 4, !alias.scope !18, !noalias !25
  %379 = or disjoint i64 %351, 8
  %380 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %379
  %wide.load125.1 = load <8 x i32>, ptr %380, align 4, !invariant.load !3, !alias.scope !12, !noalias !23
  %381 = shl <8 x i32> %wide.load125.1, %broadcast.splat108
  %382 = lshr <8 x i32> %wide.load125.1, %broadcast.splat110
  %383 = getelementptr inbounds nuw [4 x i8], ptr %10, i64 %379
  %wide.load126.1 = load <8 x i32>, ptr %383, align 4, !invariant.load !3, !alias.scope !14, !noalias !24
  %384 = or disjoint <8 x i32> %381, %382
  %385 = add <8 x i32> %wide.load126.1, %wide.load125.1
  %386 = xor <8 x i32> %384, %385
  %387 = lshr <8 x i32> %386, %broadcast.splat112
  %388 = select i1 %23, <8 x i32> %387, <8 x i32> zeroinitializer
  %389 = add <8 x i32> %386, %385
  %390 = xor <8 x i32> %388, %389
  %391 = shl <8 x i32> %390, %broadcast.splat114
  %392 = select i1 %27, <8 x i32> %391, <8 x i32> zeroinitializer
  %393 = lshr <8 x i32> %390, %broadcast.splat116
  %394 = select i1 %28, <8 x i32> %393, <8 x i32> zeroinitializer
  %395 = or <8 x i32> %392, %394
  %396 = add <8 x i32> %390, %389
  %397 = xor <8 x i32> %395, %396
  %398 = shl <8 x i32> %397, %broadcast.splat118
  %399 = select i1 %32, <8 x i32> %398, <8 x i32> zeroinitializer
  %400 = lshr <8 x i32> %397, %broadcast.splat120
  %401 = select i1 %33, <8 x i32> %400, <8 x i32> zeroinitializer
  %402 = add <8 x i32> %397, %396
  %403 = or <8 x i32> %399, %401
  %404 = xor <8 x i32> %403, %402
  %405 = add <8 x i32> %broadcast.splat122, %404
  %406 = getelementptr inbounds nuw [4 x i8], ptr %14, i64 %379
  store <8 x i32> %405, ptr %406, align 4, !alias.scope !18, !noalias !25
  %407 = add nuw nsw i64 %350, 1
  %exitcond27.not = icmp eq i64 %407, 16
  br i1 %exitcond27.not, label %broadcast_add_fusion.6_wrapped.exit, label %.split.us.us.us, !llvm.loop !26

.split.us.us:                                     ; preds = %.split.us.us.preheader, %.split.us.us
  %408 = phi i64 [ %467, %.split.us.us ], [ 0, %.split.us.us.preheader ]
  %409 = shl nuw nsw i64 %408, 4
  %410 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %409
  %wide.load102 = load <8 x i32>, ptr %410, align 4, !invariant.load !3, !alias.scope !12, !noalias !23
  %411 = shl <8 x i32> %wide.load102, %broadcast.splat85
  %412 = getelementptr inbounds nuw [4 x i8], ptr %10, i64 %409
  %wide.load103 = load <8 x i32>, ptr %412, align 4, !invariant.load !3, !alias.scope !14, !noalias !24
  %413 = add <8 x i32> %wide.load103, %wide.load102
  %414 = xor <8 x i32> %411, %413
  %415 = shl <8 x i32> %414, %broadcast.splat87
  %416 = select i1 %22, <8 x i32> %415, <8 x i32> zeroinitializer
  %417 = lshr <8 x i32> %414, %broadcast.splat89
  %418 = select i1 %23, <8 x i32> %417, <8 x i32> zeroinitializer
  %419 = or <8 x i32> %416, %418
  %420 = add <8 x i32> %414, %413
  %421 = xor <8 x i32> %419, %420
  %422 = shl <8 x i32> %421, %broadcast.splat91
  %423 = select i1 %27, <8 x i32> %422, <8 x i32> zeroinitializer
  %424 = lshr <8 x i32> %421, %broadcast.splat93
  %425 = select i1 %28, <8 x i32> %424, <8 x i32> zeroinitializer
  %426 = or <8 x i32> %423, %425
  %427 = add <8 x i32> %421, %420
  %428 = xor <8 x i32> %426, %427
  %429 = shl <8 x i32> %428, %broadcast.splat95
  %430 = select i1 %32, <8 x i32> %429, <8 x i32> zeroinitializer
  %431 = lshr <8 x i32> %428, %broadcast.splat97
  %432 = select i1 %33, <8 x i32> %431, <8 x i32> zeroinitializer
  %433 = add <8 x i32> %428, %427
  %434 = or <8 x i32> %430, %432
  %435 = xor <8 x i32> %434, %433
  %436 = add <8 x i32> %broadcast.splat99, %435
  %437 = getelementptr inbounds nuw [4 x i8], ptr %14, i64 %409
  store <8 x i32> %436, ptr %437, align 4, !alias.scope !18, !noalias !25
  %438 = or disjoint i64 %409, 8
  %439 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %438
  %wide.load102.1 = load <8 x i32>, ptr %439, align 4, !invariant.load !3, !alias.scope !12, !noalias !23
  %440 = shl <8 x i32> %wide.load102.1, %broadcast.splat85
  %441 = getelementptr inbounds nuw [4 x i8], ptr %10, i64 %438
  %wide.load103.1 = load <8 x i32>, ptr %441, align 4, !invariant.load !3, !alias.scope !14, !noalias !24
  %442 = add <8 x i32> %wide.load103.1, %wide.load102.1
  %443 = xor <8 x i32> %440, %442
  %444 = shl <8 x i32> %443, %broadcast.splat87
  %445 = select i1 %22, <8 x i32> %444, <8 x i32> zeroinitializer
  %446 = lshr <8 x i32> %443, %broadcast.splat89
  %447 = select i1 %23, <8 x i32> %446, <8 x i32> zeroinitializer
  %448 = or <8 x i32> %445, %447
  %449 = add <8 x i32> %443, %442
  %450 = xor <8 x i32> %448, %449
  %451 = shl <8 x i32> %450, %broadcast.splat91
  %452 = select i1 %27, <8 x i32> %451, <8 x i32> zeroinitializer
  %453 = lshr <8 x i32> %450, %broadcast.splat93
  %454 = select i1 %28, <8 x i32> %453, <8 x i32> zeroinitializer
  %455 = or <8 x i32> %452, %454
  %456 = add <8 x i32> %450, %449
  %457 = xor <8 x i32> %455, %456
  %458 = shl <8 x i32> %457, %broadcast.splat95
  %459 = select i1 %32, <8 x i32> %458, <8 x i32> zeroinitializer
  %460 = lshr <8 x i32> %457, %broadcast.splat97
  %461 = select i1 %33, <8 x i32> %460, <8 x i32> zeroinitializer
  %462 = add <8 x i32> %457, %456
  %463 = or <8 x i32> %459, %461
  %464 = xor <8 x i32> %463, %462
  %465 = add <8 x i32> %broadcast.splat99, %464
  %466 = getelementptr inbounds nuw [4 x i8], ptr %14, i64 %438
  store <8 x i32> %465, ptr %466, align 4, !alias.scope !18, !noalias !25
  %467 = add nuw nsw i64 %408, 1
  %exitcond25.not = icmp eq i64 %467, 16
  br i1 %exitcond25.not, label %broadcast_add_fusion.6_wrapped.exit, label %.split.us.us, !llvm.loop !26

.split:                                           ; preds = %.split.preheader, %.split
  %468 = phi i64 [ %529, %.split ], [ 0, %.split.preheader ]
  %469 = shl nuw nsw i64 %468, 4
  %470 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %469
  %wide.load = load <8 x i32>, ptr %470, align 4, !invariant.load !3, !alias.scope !12, !noalias !23
  %471 = lshr <8 x i32> %wide.load, %broadcast.splat
  %472 = select i1 %18, <8 x i32> %471, <8 x i32> zeroinitializer
  %473 = getelementptr inbounds nuw [4 x i8], ptr %10, i64 %469
  %wide.load82 = load <8 x i32>, ptr %473, align 4, !invariant.load !3, !alias.scope !14, !noalias !24
  %474 = add <8 x i32> %wide.load82, %wide.load
  %475 = xor <8 x i32> %472, %474
  %476 = shl <8 x i32> %475, %broadcast.splat69
  %477 = select i1 %22, <8 x i32> %476, <8 x i32> zeroinitializer
  %478 = lshr <8 x i32> %475, %broadcast.splat71
  %479 = select i1 %23, <8 x i32> %478, <8 x i32> zeroinitializer
  %480 = or <8 x i32> %477, %479
  %481 = add <8 x i32> %475, %474
  %482 = xor <8 x i32> %480, %481
  %483 = shl <8 x i32> %482, %broadcast.splat73
  %484 = select i1 %27, <8 x i32> %483, <8 x i32> zeroinitializer
  %485 = lshr <8 x i32> %482, %broadcast.splat75
  %486 = select i1 %28, <8 x i32> %485, <8 x i32> zeroinitializer
  %487 = or <8 x i32> %484, %486
  %488 = add <8 x i32> %482, %481
  %489 = xor <8 x i32> %487, %488
  %490 = shl <8 x i32> %489, %broadcast.splat77
  %491 = select i1 %32, <8 x i32> %490, <8 x i32> zeroinitializer
  %492 = lshr <8 x i32> %489, %broadcast.splat79
  %493 = select i1 %33, <8 x i32> %492, <8 x i32> zeroinitializer
  %494 = add <8 x i32> %489, %488
  %495 = or <8 x i32> %491, %493
  %496 = xor <8 x i32> %495, %494
  %497 = add <8 x i32> %broadcast.splat81, %496
  %498 = getelementptr inbounds nuw [4 x i8], ptr %14, i64 %469
  store <8 x i32> %497, ptr %498, align 4, !alias.scope !18, !noalias !25
  %499 = or disjoint i64 %469, 8
  %500 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %499
  %wide.load.1 = load <8 x i32>, ptr %500, align 4, !invariant.load !3, !alias.scope !12, !noalias !23
  %501 = lshr <8 x i32> %wide.load.1, %broadcast.splat
  %502 = select i1 %18, <8 x i32> %501, <8 x i32> zeroinitializer
  %503 = getelementptr inbounds nuw [4 x i8], ptr %10, i64 %499
  %wide.load82.1 = load <8 x i32>, ptr %503, align 4, !invariant.load !3, !alias.scope !14, !noalias !24
  %504 = add <8 x i32> %wide.load82.1, %wide.load.1
  %505 = xor <8 x i32> %502, %504
  %506 = shl <8 x i32> %505, %broadcast.splat69
  %507 = select i1 %22, <8 x i32> %506, <8 x i32> zeroinitializer
  %508 = lshr <8 x i32> %505, %broadcast.splat71
  %509 = select i1 %23, <8 x i32> %508, <8 x i32> zeroinitializer
  %510 = or <8 x i32> %507, %509
  %511 = add <8 x i32> %505, %504
  %512 = xor <8 x i32> %510, %511
  %513 = shl <8 x i32> %512, %broadcast.splat73
  %514 = select i1 %27, <8 x i32> %513, <8 x i32> zeroinitializer
  %515 = lshr <8 x i32> %512, %broadcast.splat75
  %516 = select i1 %28, <8 x i32> %515, <8 x i32> zeroinitializer
  %517 = or <8 x i32> %514, %516
  %518 = add <8 x i32> %512, %511
  %519 = xor <8 x i32> %517, %518
  %520 = shl <8 x i32> %519, %broadcast.splat77
  %521 = select i1 %32, <8 x i32> %520, <8 x i32> zeroinitializer
  %522 = lshr <8 x i32> %519, %broadcast.splat79
  %523 = select i1 %33, <8 x i32> %522, <8 x i32> zeroinitializer
  %524 = add <8 x i32> %519, %518
  %525 = or <8 x i32> %521, %523
  %526 = xor <8 x i32> %525, %524
  %527 = add <8 x i32> %broadcast.splat81, %526
  %528 = getelementptr inbounds nuw [4 x i8], ptr %14, i64 %499
  store <8 x i32> %527, ptr %528, align 4, !alias.scope !18, !noalias !25
  %529 = add nuw nsw i64 %468, 1
  %exitcond23.not = icmp eq i64 %529, 16
  br i1 %exitcond23.not, label %broadcast_add_fusion.6_wrapped.exit, label %.split, !llvm.loop !26

broadcast_add_fusion.6_wrapped.exit:              ; preds = %.split, %.split.us.us, %.split.us.us.us, %.split.us.us.us.us, %.split.us.us.us.us.us, %.split.us.us.us.us.us.us, %.split.us.us.us.us.us.us.us, %.split.us.us.us.us.us.us.us.us, %.split.us.us.us.us.us.us.us.us.us
  ret ptr null
}

; Function Attrs: mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite)
declare void @llvm.experimental.noalias.scope.decl(metadata) #1

attributes #0 = { nofree norecurse nosync nounwind memory(readwrite, target_mem: none) uwtable "frame-pointer"="all" "prefer-vector-width"="256" }
attributes #1 = { mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite) }

!llvm.module.flags = !{!0, !1}
!xla_cpu_memory_region_name = !{!2}

!0 = !{i32 2, !"Debug Info Version", i32 3}
!1 = !{i32 1, !"xla_dylib_index", i64 8}
!2 = !{!"xla_cpu_emitter__loop_fusion_kernel_emitter__hlo_opcode__fusion"}
!3 = !{}
!4 = !{i64 4}
!5 = !{i64 16}
!6 = !{i64 1024}
!7 = !{!8}
!8 = distinct !{!8, !9, !"broadcast_add_fusion.6_wrapped: argument 0"}
!9 = distinct !{!9, !"broadcast_add_fusion.6_wrapped"}
!10 = !{!11}
!11 = distinct !{!11, !9, !"broadcast_add_fusion.6_wrapped: argument 1"}
!12 = !{!13}
!13 = distinct !{!13, !9, !"broadcast_add_fusion.6_wrapped: argument 2"}
!14 = !{!15}
!15 = distinct !{!15, !9, !"broadcast_add_fusion.6_wrapped: argument 3"}
!16 = !{!17}
!17 = distinct !{!17, !9, !"broadcast_add_fusion.6_wrapped: argument 4"}
!18 = !{!19}
!19 = distinct !{!19, !9, !"broadcast_add_fusion.6_wrapped: argument 5"}
!20 = !{!8, !13, !15, !17, !19}
!21 = !{!11, !13, !15, !17, !19}
!22 = !{!8, !11, !13, !15, !19}
!23 = !{!8, !11, !15, !17, !19}
!24 = !{!8, !11, !13, !17, !19}
!25 = !{!8, !11, !13, !15, !17}
!26 = distinct !{!26, !27}
!27 = !{!"llvm.loop.unroll.disable"}
