//go:build !purego

#include "textflag.h"

// func dot3x4AVX2(a *float64, lda int, b *float64, ldb int, k int, out *[12]float64)
//
// out[4r+s] = Σ over t < k (a multiple of 4) of a[r·lda+t]·b[s·ldb+t], for
// r < 3 and s < 4, each sum kept in 4 lanes (lane t mod 4, fused
// multiply-adds in increasing t) and reduced as (l0+l2)+(l1+l3).
TEXT ·dot3x4AVX2(SB), NOSPLIT, $0-48
	MOVQ a+0(FP), SI
	MOVQ lda+8(FP), R8
	MOVQ b+16(FP), DI
	MOVQ ldb+24(FP), R9
	MOVQ k+32(FP), DX
	MOVQ out+40(FP), BX
	SHLQ $3, R8
	SHLQ $3, R9
	SHLQ $3, DX
	LEAQ (SI)(R8*1), R10
	LEAQ (R10)(R8*1), R11
	LEAQ (DI)(R9*1), R12
	LEAQ (R12)(R9*1), R13
	LEAQ (R13)(R9*1), R14

	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11
	XORQ   CX, CX
	CMPQ   CX, DX
	JGE    reduce

loop:
	VMOVUPD     (SI)(CX*1), Y12
	VMOVUPD     (R10)(CX*1), Y13
	VMOVUPD     (R11)(CX*1), Y14
	VMOVUPD     (DI)(CX*1), Y15
	VFMADD231PD Y15, Y12, Y0
	VFMADD231PD Y15, Y13, Y1
	VFMADD231PD Y15, Y14, Y2
	VMOVUPD     (R12)(CX*1), Y15
	VFMADD231PD Y15, Y12, Y3
	VFMADD231PD Y15, Y13, Y4
	VFMADD231PD Y15, Y14, Y5
	VMOVUPD     (R13)(CX*1), Y15
	VFMADD231PD Y15, Y12, Y6
	VFMADD231PD Y15, Y13, Y7
	VFMADD231PD Y15, Y14, Y8
	VMOVUPD     (R14)(CX*1), Y15
	VFMADD231PD Y15, Y12, Y9
	VFMADD231PD Y15, Y13, Y10
	VFMADD231PD Y15, Y14, Y11
	ADDQ        $32, CX
	CMPQ        CX, DX
	JLT         loop

reduce:
	// Accumulator Y(3s+r) holds row r of a against row s of b; it goes to
	// out[4r+s]. Reduce (l0,l1,l2,l3) to (l0+l2)+(l1+l3).
#define HSUM(Y, X, OFF) \
	VEXTRACTF128 $1, Y, X15 \
	VADDPD       X15, X, X  \
	VHADDPD      X, X, X    \
	VMOVSD       X, OFF(BX)

	HSUM(Y0, X0, 0)
	HSUM(Y1, X1, 32)
	HSUM(Y2, X2, 64)
	HSUM(Y3, X3, 8)
	HSUM(Y4, X4, 40)
	HSUM(Y5, X5, 72)
	HSUM(Y6, X6, 16)
	HSUM(Y7, X7, 48)
	HSUM(Y8, X8, 80)
	HSUM(Y9, X9, 24)
	HSUM(Y10, X10, 56)
	HSUM(Y11, X11, 88)
	VZEROUPPER
	RET
