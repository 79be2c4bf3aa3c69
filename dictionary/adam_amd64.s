//go:build !purego

#include "textflag.h"

// func adamRowAVX2(p, m, v, grad *float64, n int, c *[6]float64, lanes *[4]float64)
//
// One Adam step on n entries (a multiple of 4), g nil for a zero gradient,
// with c = (β₁, β₂, 1−β₁, 1−β₂, sc, ce):
//
//	m ← β₁m + (1−β₁)g,  v ← β₂v + ((1−β₂)g)g,
//	p ← p − (sc·m)/(√v + ce),
//
// adding (p_new − p_old)² to lane i mod 4 of lanes. Multiplications and
// additions are separate (no fused multiply-add), as in adamRowGo.
TEXT ·adamRowAVX2(SB), NOSPLIT, $0-56
	MOVQ p+0(FP), SI
	MOVQ m+8(FP), DI
	MOVQ v+16(FP), R8
	MOVQ grad+24(FP), R9
	MOVQ n+32(FP), DX
	MOVQ c+40(FP), AX
	MOVQ lanes+48(FP), BX
	VBROADCASTSD 0(AX), Y0
	VBROADCASTSD 8(AX), Y1
	VBROADCASTSD 16(AX), Y2
	VBROADCASTSD 24(AX), Y3
	VBROADCASTSD 32(AX), Y4
	VBROADCASTSD 40(AX), Y5
	VMOVUPD      (BX), Y6
	SHLQ         $3, DX
	XORQ         CX, CX

loop:
	CMPQ    CX, DX
	JGE     done
	VMOVUPD (DI)(CX*1), Y7
	VMULPD  Y0, Y7, Y7
	VMOVUPD (R8)(CX*1), Y8
	VMULPD  Y1, Y8, Y8
	TESTQ   R9, R9
	JEQ     update
	VMOVUPD (R9)(CX*1), Y10
	VMULPD  Y2, Y10, Y11
	VADDPD  Y11, Y7, Y7
	VMULPD  Y3, Y10, Y11
	VMULPD  Y10, Y11, Y11
	VADDPD  Y11, Y8, Y8

update:
	VMOVUPD Y7, (DI)(CX*1)
	VMOVUPD Y8, (R8)(CX*1)
	VSQRTPD Y8, Y9
	VADDPD  Y5, Y9, Y9
	VMULPD  Y4, Y7, Y12
	VDIVPD  Y9, Y12, Y12
	VMOVUPD (SI)(CX*1), Y13
	VSUBPD  Y12, Y13, Y14
	VMOVUPD Y14, (SI)(CX*1)
	VSUBPD  Y13, Y14, Y15
	VMULPD  Y15, Y15, Y15
	VADDPD  Y15, Y6, Y6
	ADDQ    $32, CX
	JMP     loop

done:
	VMOVUPD Y6, (BX)
	VZEROUPPER
	RET
