//go:build !purego

#include "textflag.h"

// func dot3x4accAVX2(a *float64, lda int, b *float64, ldb int, k int, acc *[48]float64, init int)
//
// Advances, over t < k (a multiple of 4), the 3×4 block of dot products
// of rows r < 3 of a (stride lda) with rows s < 4 of b (stride ldb), each
// kept in 4 lanes (lane t mod 4, fused multiply-adds in increasing t).
// The lanes (l0, l1, l2, l3) of row r against row s live in memory at
// acc[4(4r+s) : 4(4r+s)+4] between calls, so that a dot product can be
// computed over consecutive slices of k; with init ≠ 0 they start at zero,
// otherwise at acc's values. They are stored back unreduced; the caller
// reduces them as (l0+l2)+(l1+l3).
TEXT ·dot3x4accAVX2(SB), NOSPLIT, $0-56
	MOVQ a+0(FP), SI
	MOVQ lda+8(FP), R8
	MOVQ b+16(FP), DI
	MOVQ ldb+24(FP), R9
	MOVQ k+32(FP), DX
	MOVQ acc+40(FP), BX
	MOVQ init+48(FP), AX
	SHLQ $3, R8
	SHLQ $3, R9
	SHLQ $3, DX
	LEAQ (SI)(R8*1), R10
	LEAQ (R10)(R8*1), R11
	LEAQ (DI)(R9*1), R12
	LEAQ (R12)(R9*1), R13
	LEAQ (R13)(R9*1), R14

	TESTQ AX, AX
	JEQ   load
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
	JMP    start

load:
	// Y(3s+r) is row r against row s, at byte offset 32(4r+s).
	VMOVUPD 0(BX), Y0
	VMOVUPD 128(BX), Y1
	VMOVUPD 256(BX), Y2
	VMOVUPD 32(BX), Y3
	VMOVUPD 160(BX), Y4
	VMOVUPD 288(BX), Y5
	VMOVUPD 64(BX), Y6
	VMOVUPD 192(BX), Y7
	VMOVUPD 320(BX), Y8
	VMOVUPD 96(BX), Y9
	VMOVUPD 224(BX), Y10
	VMOVUPD 352(BX), Y11

start:
	XORQ CX, CX
	CMPQ CX, DX
	JGE  store

accloop:
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
	JLT         accloop

store:
	VMOVUPD Y0, 0(BX)
	VMOVUPD Y1, 128(BX)
	VMOVUPD Y2, 256(BX)
	VMOVUPD Y3, 32(BX)
	VMOVUPD Y4, 160(BX)
	VMOVUPD Y5, 288(BX)
	VMOVUPD Y6, 64(BX)
	VMOVUPD Y7, 192(BX)
	VMOVUPD Y8, 320(BX)
	VMOVUPD Y9, 96(BX)
	VMOVUPD Y10, 224(BX)
	VMOVUPD Y11, 352(BX)
	VZEROUPPER
	RET

// func axpysAVX2(dst *float64, n int, w *float64, xs *[]float64, terms int)
//
// For i < n (a multiple of 4): dst[i] = (…((dst[i] + w[0]·xs[0][i]) +
// w[1]·xs[1][i]) + …) + w[terms−1]·xs[terms−1][i], every product and sum
// rounded on its own (no fused multiply-add). Sixteen entries per pass
// while they last, then four.
TEXT ·axpysAVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ n+8(FP), DX
	MOVQ w+16(FP), R8
	MOVQ xs+24(FP), R9
	MOVQ terms+32(FP), R10
	SHLQ $3, DX
	XORQ CX, CX

loop16:
	LEAQ    128(CX), AX
	CMPQ    AX, DX
	JGT     loop4
	VMOVUPD (DI)(CX*1), Y0
	VMOVUPD 32(DI)(CX*1), Y1
	VMOVUPD 64(DI)(CX*1), Y2
	VMOVUPD 96(DI)(CX*1), Y3
	XORQ    BX, BX
	MOVQ    R9, R11

terms16:
	CMPQ         BX, R10
	JGE          store16
	MOVQ         (R11), R12
	VBROADCASTSD (R8)(BX*8), Y4
	VMULPD       (R12)(CX*1), Y4, Y5
	VADDPD       Y5, Y0, Y0
	VMULPD       32(R12)(CX*1), Y4, Y6
	VADDPD       Y6, Y1, Y1
	VMULPD       64(R12)(CX*1), Y4, Y7
	VADDPD       Y7, Y2, Y2
	VMULPD       96(R12)(CX*1), Y4, Y8
	VADDPD       Y8, Y3, Y3
	INCQ         BX
	ADDQ         $24, R11
	JMP          terms16

store16:
	VMOVUPD Y0, (DI)(CX*1)
	VMOVUPD Y1, 32(DI)(CX*1)
	VMOVUPD Y2, 64(DI)(CX*1)
	VMOVUPD Y3, 96(DI)(CX*1)
	MOVQ    AX, CX
	JMP     loop16

loop4:
	CMPQ    CX, DX
	JGE     done
	VMOVUPD (DI)(CX*1), Y0
	XORQ    BX, BX
	MOVQ    R9, R11

terms4:
	CMPQ         BX, R10
	JGE          store4
	MOVQ         (R11), R12
	VBROADCASTSD (R8)(BX*8), Y4
	VMULPD       (R12)(CX*1), Y4, Y5
	VADDPD       Y5, Y0, Y0
	INCQ         BX
	ADDQ         $24, R11
	JMP          terms4

store4:
	VMOVUPD Y0, (DI)(CX*1)
	ADDQ    $32, CX
	JMP     loop4

done:
	VZEROUPPER
	RET

// func sqDistsAVX2(dst, norms, dots *float64, n int, norm float64) float64
//
// For t < n (a multiple of 4): dst[t] = max(0, (norms[t] + norm) − 2·dots[t])
// with VMAXPD's second source the computed value, so that a NaN stays NaN
// (as "if v < 0 { v = 0 }" leaves it); returns the largest dst[t], NaNs
// ignored, and 0 if none is larger.
TEXT ·sqDistsAVX2(SB), NOSPLIT, $0-48
	MOVQ         dst+0(FP), DI
	MOVQ         norms+8(FP), SI
	MOVQ         dots+16(FP), DX
	MOVQ         n+24(FP), CX
	VBROADCASTSD norm+32(FP), Y0
	VXORPD       Y1, Y1, Y1
	VXORPD       Y2, Y2, Y2
	SHLQ         $3, CX
	XORQ         AX, AX

sqloop:
	CMPQ    AX, CX
	JGE     sqdone
	VMOVUPD (SI)(AX*1), Y3
	VADDPD  Y0, Y3, Y3
	VMOVUPD (DX)(AX*1), Y4
	VADDPD  Y4, Y4, Y4
	VSUBPD  Y4, Y3, Y3
	VMAXPD  Y3, Y1, Y3
	VMAXPD  Y2, Y3, Y2
	VMOVUPD Y3, (DI)(AX*1)
	ADDQ    $32, AX
	JMP     sqloop

sqdone:
	VEXTRACTF128 $1, Y2, X3
	VMAXPD       X3, X2, X2
	VPERMILPD    $1, X2, X3
	VMAXPD       X3, X2, X2
	MOVSD        X2, ret+40(FP)
	VZEROUPPER
	RET

// func addClampedAVX2(dst *float64, n int, c float64)
//
// For t < n (a multiple of 4): dst[t] = max(0, dst[t] + c), NaN kept.
TEXT ·addClampedAVX2(SB), NOSPLIT, $0-24
	MOVQ         dst+0(FP), DI
	MOVQ         n+8(FP), CX
	VBROADCASTSD c+16(FP), Y0
	VXORPD       Y1, Y1, Y1
	SHLQ         $3, CX
	XORQ         AX, AX

acloop:
	CMPQ    AX, CX
	JGE     acdone
	VMOVUPD (DI)(AX*1), Y2
	VADDPD  Y0, Y2, Y2
	VMAXPD  Y2, Y1, Y2
	VMOVUPD Y2, (DI)(AX*1)
	ADDQ    $32, AX
	JMP     acloop

acdone:
	VZEROUPPER
	RET

// func aboveChunkAVX2(x *float64, n int, bound float64) int
//
// Returns the start of the first block of four entries of x[:n] (n a
// multiple of 4) holding a NaN or an entry larger than bound in absolute
// value, or n if there is none: an entry passes when |x| ≤ bound, an
// ordered comparison that is false for NaN.
TEXT ·aboveChunkAVX2(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	MOVQ         $0x7fffffffffffffff, AX
	MOVQ         AX, X0
	VBROADCASTSD X0, Y0
	VBROADCASTSD bound+16(FP), Y1
	XORQ         DX, DX

nfloop:
	CMPQ      DX, CX
	JGE       nfdone
	VANDPD    (SI)(DX*8), Y0, Y2
	VCMPPD    $0x12, Y1, Y2, Y2
	VMOVMSKPD Y2, AX
	CMPQ      AX, $15
	JNE       nfdone
	ADDQ      $4, DX
	JMP       nfloop

nfdone:
	MOVQ DX, ret+24(FP)
	VZEROUPPER
	RET
