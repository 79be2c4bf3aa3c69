//go:build !purego

#include "textflag.h"

// func dot3x4accAVX2(a *float64, lda int, b *float64, ldb int, k int, acc *[48]float64, init int, c *float64, ldc int)
//
// Advances, over t < k (a multiple of 4), the 3×4 block of dot products
// of rows r < 3 of a (stride lda) with rows s < 4 of b (stride ldb), each
// kept in 4 lanes (lane t mod 4, fused multiply-adds in increasing t).
// The lanes (l0, l1, l2, l3) of row r against row s live in memory at
// acc[4(4r+s) : 4(4r+s)+4] between calls, so that a dot product can be
// computed over consecutive slices of k; with init ≠ 0 they start at zero,
// otherwise at acc's values. With c = nil they are stored back unreduced
// (the caller reduces them as (l0+l2)+(l1+l3)); otherwise each dot
// product is reduced so in registers and the 3×4 block written to c (row
// stride ldc).
TEXT ·dot3x4accAVX2(SB), NOSPLIT, $0-72
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
	MOVQ  c+56(FP), AX
	TESTQ AX, AX
	JNE   reduce
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

reduce:
	// Y(3s+r) = [l0 l1 l2 l3] of row r against row s: its upper half added
	// to its lower one gives [l0+l2, l1+l3], whose two entries added give
	// the dot product, stored at c[r·ldc+s].
	MOVQ ldc+64(FP), R8
	SHLQ $3, R8
	VEXTRACTF128 $1, Y0, X12
	VADDPD       X12, X0, X0
	VPERMILPD    $1, X0, X13
	VADDSD       X13, X0, X0
	VMOVSD       X0, 0(AX)
	VEXTRACTF128 $1, Y3, X12
	VADDPD       X12, X3, X3
	VPERMILPD    $1, X3, X13
	VADDSD       X13, X3, X3
	VMOVSD       X3, 8(AX)
	VEXTRACTF128 $1, Y6, X12
	VADDPD       X12, X6, X6
	VPERMILPD    $1, X6, X13
	VADDSD       X13, X6, X6
	VMOVSD       X6, 16(AX)
	VEXTRACTF128 $1, Y9, X12
	VADDPD       X12, X9, X9
	VPERMILPD    $1, X9, X13
	VADDSD       X13, X9, X9
	VMOVSD       X9, 24(AX)
	ADDQ         R8, AX
	VEXTRACTF128 $1, Y1, X12
	VADDPD       X12, X1, X1
	VPERMILPD    $1, X1, X13
	VADDSD       X13, X1, X1
	VMOVSD       X1, 0(AX)
	VEXTRACTF128 $1, Y4, X12
	VADDPD       X12, X4, X4
	VPERMILPD    $1, X4, X13
	VADDSD       X13, X4, X4
	VMOVSD       X4, 8(AX)
	VEXTRACTF128 $1, Y7, X12
	VADDPD       X12, X7, X7
	VPERMILPD    $1, X7, X13
	VADDSD       X13, X7, X7
	VMOVSD       X7, 16(AX)
	VEXTRACTF128 $1, Y10, X12
	VADDPD       X12, X10, X10
	VPERMILPD    $1, X10, X13
	VADDSD       X13, X10, X10
	VMOVSD       X10, 24(AX)
	ADDQ         R8, AX
	VEXTRACTF128 $1, Y2, X12
	VADDPD       X12, X2, X2
	VPERMILPD    $1, X2, X13
	VADDSD       X13, X2, X2
	VMOVSD       X2, 0(AX)
	VEXTRACTF128 $1, Y5, X12
	VADDPD       X12, X5, X5
	VPERMILPD    $1, X5, X13
	VADDSD       X13, X5, X5
	VMOVSD       X5, 8(AX)
	VEXTRACTF128 $1, Y8, X12
	VADDPD       X12, X8, X8
	VPERMILPD    $1, X8, X13
	VADDSD       X13, X8, X8
	VMOVSD       X8, 16(AX)
	VEXTRACTF128 $1, Y11, X12
	VADDPD       X12, X11, X11
	VPERMILPD    $1, X11, X13
	VADDSD       X13, X11, X11
	VMOVSD       X11, 24(AX)
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

// func dot6x8accAVX512(a *float64, lda int, b *float64, ldb int, k int, acc *[192]float64, init int, c *float64, ldc int)
//
// dot3x4accAVX2 for a 6×8 block on 512-bit registers, with the same lanes
// and order: lane t mod 4 of row r of a against row s of b lives at
// acc[4(8r+s) : 4(8r+s)+4], and Z(4r+p) holds the lanes of row r against
// rows 2p and 2p+1 (which are adjacent in acc). Each step of four t loads
// the rows of b in pairs (a 256-bit load and a 256-bit insert) and
// broadcasts four entries of each row of a to both halves of a register,
// so that each fused multiply-add advances the lanes of two dot products.
// Pointers: a rows at SI + {0, 1, 2, 3, 4, 5}·lda (R8, R8·2, R9, R8·4,
// R10); b rows at DI + {0, …, 7}·ldb (R11, R11·2, R12, R11·4, R13, R12·2,
// R14).
//
// With c ≠ nil the lanes are not stored: each dot product is reduced as
// (l0+l2)+(l1+l3) and the 6×8 block written to c (row stride ldc).
TEXT ·dot6x8accAVX512(SB), NOSPLIT, $0-72
	MOVQ a+0(FP), SI
	MOVQ lda+8(FP), R8
	MOVQ b+16(FP), DI
	MOVQ ldb+24(FP), R11
	MOVQ k+32(FP), DX
	MOVQ acc+40(FP), BX
	MOVQ init+48(FP), AX
	SHLQ $3, R8
	SHLQ $3, R11
	LEAQ (R8)(R8*2), R9
	LEAQ (R8)(R8*4), R10
	LEAQ (R11)(R11*2), R12
	LEAQ (R11)(R11*4), R13
	LEAQ (R12)(R11*4), R14

	TESTQ AX, AX
	JEQ   load512
	VPXORQ Z0, Z0, Z0
	VMOVAPD Z0, Z1
	VMOVAPD Z0, Z2
	VMOVAPD Z0, Z3
	VMOVAPD Z0, Z4
	VMOVAPD Z0, Z5
	VMOVAPD Z0, Z6
	VMOVAPD Z0, Z7
	VMOVAPD Z0, Z8
	VMOVAPD Z0, Z9
	VMOVAPD Z0, Z10
	VMOVAPD Z0, Z11
	VMOVAPD Z0, Z12
	VMOVAPD Z0, Z13
	VMOVAPD Z0, Z14
	VMOVAPD Z0, Z15
	VMOVAPD Z0, Z16
	VMOVAPD Z0, Z17
	VMOVAPD Z0, Z18
	VMOVAPD Z0, Z19
	VMOVAPD Z0, Z20
	VMOVAPD Z0, Z21
	VMOVAPD Z0, Z22
	VMOVAPD Z0, Z23
	JMP     start512

load512:
	VMOVUPD 0(BX), Z0
	VMOVUPD 64(BX), Z1
	VMOVUPD 128(BX), Z2
	VMOVUPD 192(BX), Z3
	VMOVUPD 256(BX), Z4
	VMOVUPD 320(BX), Z5
	VMOVUPD 384(BX), Z6
	VMOVUPD 448(BX), Z7
	VMOVUPD 512(BX), Z8
	VMOVUPD 576(BX), Z9
	VMOVUPD 640(BX), Z10
	VMOVUPD 704(BX), Z11
	VMOVUPD 768(BX), Z12
	VMOVUPD 832(BX), Z13
	VMOVUPD 896(BX), Z14
	VMOVUPD 960(BX), Z15
	VMOVUPD 1024(BX), Z16
	VMOVUPD 1088(BX), Z17
	VMOVUPD 1152(BX), Z18
	VMOVUPD 1216(BX), Z19
	VMOVUPD 1280(BX), Z20
	VMOVUPD 1344(BX), Z21
	VMOVUPD 1408(BX), Z22
	VMOVUPD 1472(BX), Z23

start512:
	SUBQ $4, DX
	JLT  done512

loop512:
	VMOVUPD      (DI), Y24
	VINSERTF64X4 $1, (DI)(R11*1), Z24, Z24
	VMOVUPD      (DI)(R11*2), Y25
	VINSERTF64X4 $1, (DI)(R12*1), Z25, Z25
	VMOVUPD      (DI)(R11*4), Y26
	VINSERTF64X4 $1, (DI)(R13*1), Z26, Z26
	VMOVUPD      (DI)(R12*2), Y27
	VINSERTF64X4 $1, (DI)(R14*1), Z27, Z27
	VBROADCASTF64X4 (SI), Z28
	VFMADD231PD     Z24, Z28, Z0
	VFMADD231PD     Z25, Z28, Z1
	VFMADD231PD     Z26, Z28, Z2
	VFMADD231PD     Z27, Z28, Z3
	VBROADCASTF64X4 (SI)(R8*1), Z29
	VFMADD231PD     Z24, Z29, Z4
	VFMADD231PD     Z25, Z29, Z5
	VFMADD231PD     Z26, Z29, Z6
	VFMADD231PD     Z27, Z29, Z7
	VBROADCASTF64X4 (SI)(R8*2), Z28
	VFMADD231PD     Z24, Z28, Z8
	VFMADD231PD     Z25, Z28, Z9
	VFMADD231PD     Z26, Z28, Z10
	VFMADD231PD     Z27, Z28, Z11
	VBROADCASTF64X4 (SI)(R9*1), Z29
	VFMADD231PD     Z24, Z29, Z12
	VFMADD231PD     Z25, Z29, Z13
	VFMADD231PD     Z26, Z29, Z14
	VFMADD231PD     Z27, Z29, Z15
	VBROADCASTF64X4 (SI)(R8*4), Z28
	VFMADD231PD     Z24, Z28, Z16
	VFMADD231PD     Z25, Z28, Z17
	VFMADD231PD     Z26, Z28, Z18
	VFMADD231PD     Z27, Z28, Z19
	VBROADCASTF64X4 (SI)(R10*1), Z29
	VFMADD231PD     Z24, Z29, Z20
	VFMADD231PD     Z25, Z29, Z21
	VFMADD231PD     Z26, Z29, Z22
	VFMADD231PD     Z27, Z29, Z23
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $4, DX
	JGE  loop512

done512:
	MOVQ  c+56(FP), CX
	TESTQ CX, CX
	JNE   reduce512
	VMOVUPD Z0, 0(BX)
	VMOVUPD Z1, 64(BX)
	VMOVUPD Z2, 128(BX)
	VMOVUPD Z3, 192(BX)
	VMOVUPD Z4, 256(BX)
	VMOVUPD Z5, 320(BX)
	VMOVUPD Z6, 384(BX)
	VMOVUPD Z7, 448(BX)
	VMOVUPD Z8, 512(BX)
	VMOVUPD Z9, 576(BX)
	VMOVUPD Z10, 640(BX)
	VMOVUPD Z11, 704(BX)
	VMOVUPD Z12, 768(BX)
	VMOVUPD Z13, 832(BX)
	VMOVUPD Z14, 896(BX)
	VMOVUPD Z15, 960(BX)
	VMOVUPD Z16, 1024(BX)
	VMOVUPD Z17, 1088(BX)
	VMOVUPD Z18, 1152(BX)
	VMOVUPD Z19, 1216(BX)
	VMOVUPD Z20, 1280(BX)
	VMOVUPD Z21, 1344(BX)
	VMOVUPD Z22, 1408(BX)
	VMOVUPD Z23, 1472(BX)
	VZEROUPPER
	RET

reduce512:
	// Per register, [l0 l1 l2 l3 | m0 m1 m2 m3] becomes
	// [l0+l2, l1+l3, … | m0+m2, m1+m3, …] (128-bit halves swapped and
	// added), then element 0 is (l0+l2)+(l1+l3) and element 4
	// (m0+m2)+(m1+m3) (pairs swapped and added). Two permutes and an
	// insert gather elements 0 and 4 of the row's four registers.
	MOVQ      ldc+64(FP), R8
	SHLQ      $3, R8
	VMOVDQU64 reduceIdx<>(SB), Z30
	VSHUFF64X2 $0xB1, Z0, Z0, Z28
	VADDPD     Z28, Z0, Z0
	VPERMILPD  $0x55, Z0, Z28
	VADDPD     Z28, Z0, Z0
	VSHUFF64X2 $0xB1, Z1, Z1, Z29
	VADDPD     Z29, Z1, Z1
	VPERMILPD  $0x55, Z1, Z29
	VADDPD     Z29, Z1, Z1
	VSHUFF64X2 $0xB1, Z2, Z2, Z28
	VADDPD     Z28, Z2, Z2
	VPERMILPD  $0x55, Z2, Z28
	VADDPD     Z28, Z2, Z2
	VSHUFF64X2 $0xB1, Z3, Z3, Z29
	VADDPD     Z29, Z3, Z3
	VPERMILPD  $0x55, Z3, Z29
	VADDPD     Z29, Z3, Z3
	VPERMT2PD    Z1, Z30, Z0
	VPERMT2PD    Z3, Z30, Z2
	VINSERTF64X4 $1, Y2, Z0, Z0
	VMOVUPD      Z0, (CX)
	ADDQ         R8, CX
	VSHUFF64X2 $0xB1, Z4, Z4, Z28
	VADDPD     Z28, Z4, Z4
	VPERMILPD  $0x55, Z4, Z28
	VADDPD     Z28, Z4, Z4
	VSHUFF64X2 $0xB1, Z5, Z5, Z29
	VADDPD     Z29, Z5, Z5
	VPERMILPD  $0x55, Z5, Z29
	VADDPD     Z29, Z5, Z5
	VSHUFF64X2 $0xB1, Z6, Z6, Z28
	VADDPD     Z28, Z6, Z6
	VPERMILPD  $0x55, Z6, Z28
	VADDPD     Z28, Z6, Z6
	VSHUFF64X2 $0xB1, Z7, Z7, Z29
	VADDPD     Z29, Z7, Z7
	VPERMILPD  $0x55, Z7, Z29
	VADDPD     Z29, Z7, Z7
	VPERMT2PD    Z5, Z30, Z4
	VPERMT2PD    Z7, Z30, Z6
	VINSERTF64X4 $1, Y6, Z4, Z4
	VMOVUPD      Z4, (CX)
	ADDQ         R8, CX
	VSHUFF64X2 $0xB1, Z8, Z8, Z28
	VADDPD     Z28, Z8, Z8
	VPERMILPD  $0x55, Z8, Z28
	VADDPD     Z28, Z8, Z8
	VSHUFF64X2 $0xB1, Z9, Z9, Z29
	VADDPD     Z29, Z9, Z9
	VPERMILPD  $0x55, Z9, Z29
	VADDPD     Z29, Z9, Z9
	VSHUFF64X2 $0xB1, Z10, Z10, Z28
	VADDPD     Z28, Z10, Z10
	VPERMILPD  $0x55, Z10, Z28
	VADDPD     Z28, Z10, Z10
	VSHUFF64X2 $0xB1, Z11, Z11, Z29
	VADDPD     Z29, Z11, Z11
	VPERMILPD  $0x55, Z11, Z29
	VADDPD     Z29, Z11, Z11
	VPERMT2PD    Z9, Z30, Z8
	VPERMT2PD    Z11, Z30, Z10
	VINSERTF64X4 $1, Y10, Z8, Z8
	VMOVUPD      Z8, (CX)
	ADDQ         R8, CX
	VSHUFF64X2 $0xB1, Z12, Z12, Z28
	VADDPD     Z28, Z12, Z12
	VPERMILPD  $0x55, Z12, Z28
	VADDPD     Z28, Z12, Z12
	VSHUFF64X2 $0xB1, Z13, Z13, Z29
	VADDPD     Z29, Z13, Z13
	VPERMILPD  $0x55, Z13, Z29
	VADDPD     Z29, Z13, Z13
	VSHUFF64X2 $0xB1, Z14, Z14, Z28
	VADDPD     Z28, Z14, Z14
	VPERMILPD  $0x55, Z14, Z28
	VADDPD     Z28, Z14, Z14
	VSHUFF64X2 $0xB1, Z15, Z15, Z29
	VADDPD     Z29, Z15, Z15
	VPERMILPD  $0x55, Z15, Z29
	VADDPD     Z29, Z15, Z15
	VPERMT2PD    Z13, Z30, Z12
	VPERMT2PD    Z15, Z30, Z14
	VINSERTF64X4 $1, Y14, Z12, Z12
	VMOVUPD      Z12, (CX)
	ADDQ         R8, CX
	VSHUFF64X2 $0xB1, Z16, Z16, Z28
	VADDPD     Z28, Z16, Z16
	VPERMILPD  $0x55, Z16, Z28
	VADDPD     Z28, Z16, Z16
	VSHUFF64X2 $0xB1, Z17, Z17, Z29
	VADDPD     Z29, Z17, Z17
	VPERMILPD  $0x55, Z17, Z29
	VADDPD     Z29, Z17, Z17
	VSHUFF64X2 $0xB1, Z18, Z18, Z28
	VADDPD     Z28, Z18, Z18
	VPERMILPD  $0x55, Z18, Z28
	VADDPD     Z28, Z18, Z18
	VSHUFF64X2 $0xB1, Z19, Z19, Z29
	VADDPD     Z29, Z19, Z19
	VPERMILPD  $0x55, Z19, Z29
	VADDPD     Z29, Z19, Z19
	VPERMT2PD    Z17, Z30, Z16
	VPERMT2PD    Z19, Z30, Z18
	VINSERTF64X4 $1, Y18, Z16, Z16
	VMOVUPD      Z16, (CX)
	ADDQ         R8, CX
	VSHUFF64X2 $0xB1, Z20, Z20, Z28
	VADDPD     Z28, Z20, Z20
	VPERMILPD  $0x55, Z20, Z28
	VADDPD     Z28, Z20, Z20
	VSHUFF64X2 $0xB1, Z21, Z21, Z29
	VADDPD     Z29, Z21, Z21
	VPERMILPD  $0x55, Z21, Z29
	VADDPD     Z29, Z21, Z21
	VSHUFF64X2 $0xB1, Z22, Z22, Z28
	VADDPD     Z28, Z22, Z22
	VPERMILPD  $0x55, Z22, Z28
	VADDPD     Z28, Z22, Z22
	VSHUFF64X2 $0xB1, Z23, Z23, Z29
	VADDPD     Z29, Z23, Z23
	VPERMILPD  $0x55, Z23, Z29
	VADDPD     Z29, Z23, Z23
	VPERMT2PD    Z21, Z30, Z20
	VPERMT2PD    Z23, Z30, Z22
	VINSERTF64X4 $1, Y22, Z20, Z20
	VMOVUPD      Z20, (CX)
	VZEROUPPER
	RET

// reduceIdx picks elements 0 and 4 of two registers (VPERMT2PD).
DATA reduceIdx<>+0(SB)/8, $0
DATA reduceIdx<>+8(SB)/8, $4
DATA reduceIdx<>+16(SB)/8, $8
DATA reduceIdx<>+24(SB)/8, $12
DATA reduceIdx<>+32(SB)/8, $0
DATA reduceIdx<>+40(SB)/8, $0
DATA reduceIdx<>+48(SB)/8, $0
DATA reduceIdx<>+56(SB)/8, $0
GLOBL reduceIdx<>(SB), RODATA|NOPTR, $64

// func axpys4AVX2(dst *[4]*float64, n int, w *float64, xs *[]float64, terms int)
//
// For j < 4 and i < n (a multiple of 4): dst[j][i] = (…((dst[j][i] +
// w[j]·xs[0][i]) + w[4+j]·xs[1][i]) + …) + w[4(terms−1)+j]·xs[terms−1][i],
// every product and sum rounded on its own (no fused multiply-add): the
// operations of axpysAVX2 on each dst[j], each row loaded once for the
// four. Eight entries of each dst[j] per pass while they last, then four.
TEXT ·axpys4AVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), AX
	MOVQ 0(AX), DI
	MOVQ 8(AX), SI
	MOVQ 16(AX), R12
	MOVQ 24(AX), R13
	MOVQ n+8(FP), DX
	MOVQ w+16(FP), R8
	MOVQ xs+24(FP), R9
	MOVQ terms+32(FP), R10
	SHLQ $3, DX
	SHLQ $5, R10
	XORQ CX, CX

loop8:
	LEAQ    64(CX), AX
	CMPQ    AX, DX
	JGT     loop4
	VMOVUPD (DI)(CX*1), Y0
	VMOVUPD 32(DI)(CX*1), Y1
	VMOVUPD (SI)(CX*1), Y2
	VMOVUPD 32(SI)(CX*1), Y3
	VMOVUPD (R12)(CX*1), Y4
	VMOVUPD 32(R12)(CX*1), Y5
	VMOVUPD (R13)(CX*1), Y6
	VMOVUPD 32(R13)(CX*1), Y7
	XORQ    BX, BX
	MOVQ    R9, R11

terms8:
	CMPQ         BX, R10
	JGE          store8
	MOVQ         (R11), AX
	VMOVUPD      (AX)(CX*1), Y8
	VMOVUPD      32(AX)(CX*1), Y9
	VBROADCASTSD (R8)(BX*1), Y10
	VMULPD       Y8, Y10, Y11
	VADDPD       Y11, Y0, Y0
	VMULPD       Y9, Y10, Y12
	VADDPD       Y12, Y1, Y1
	VBROADCASTSD 8(R8)(BX*1), Y13
	VMULPD       Y8, Y13, Y14
	VADDPD       Y14, Y2, Y2
	VMULPD       Y9, Y13, Y15
	VADDPD       Y15, Y3, Y3
	VBROADCASTSD 16(R8)(BX*1), Y10
	VMULPD       Y8, Y10, Y11
	VADDPD       Y11, Y4, Y4
	VMULPD       Y9, Y10, Y12
	VADDPD       Y12, Y5, Y5
	VBROADCASTSD 24(R8)(BX*1), Y13
	VMULPD       Y8, Y13, Y14
	VADDPD       Y14, Y6, Y6
	VMULPD       Y9, Y13, Y15
	VADDPD       Y15, Y7, Y7
	ADDQ         $32, BX
	ADDQ         $24, R11
	JMP          terms8

store8:
	VMOVUPD Y0, (DI)(CX*1)
	VMOVUPD Y1, 32(DI)(CX*1)
	VMOVUPD Y2, (SI)(CX*1)
	VMOVUPD Y3, 32(SI)(CX*1)
	VMOVUPD Y4, (R12)(CX*1)
	VMOVUPD Y5, 32(R12)(CX*1)
	VMOVUPD Y6, (R13)(CX*1)
	VMOVUPD Y7, 32(R13)(CX*1)
	ADDQ    $64, CX
	JMP     loop8

loop4:
	CMPQ    CX, DX
	JGE     done4
	VMOVUPD (DI)(CX*1), Y0
	VMOVUPD (SI)(CX*1), Y2
	VMOVUPD (R12)(CX*1), Y4
	VMOVUPD (R13)(CX*1), Y6
	XORQ    BX, BX
	MOVQ    R9, R11

terms4:
	CMPQ         BX, R10
	JGE          store4
	MOVQ         (R11), AX
	VMOVUPD      (AX)(CX*1), Y8
	VBROADCASTSD (R8)(BX*1), Y10
	VMULPD       Y8, Y10, Y11
	VADDPD       Y11, Y0, Y0
	VBROADCASTSD 8(R8)(BX*1), Y13
	VMULPD       Y8, Y13, Y14
	VADDPD       Y14, Y2, Y2
	VBROADCASTSD 16(R8)(BX*1), Y10
	VMULPD       Y8, Y10, Y12
	VADDPD       Y12, Y4, Y4
	VBROADCASTSD 24(R8)(BX*1), Y13
	VMULPD       Y8, Y13, Y15
	VADDPD       Y15, Y6, Y6
	ADDQ         $32, BX
	ADDQ         $24, R11
	JMP          terms4

store4:
	VMOVUPD Y0, (DI)(CX*1)
	VMOVUPD Y2, (SI)(CX*1)
	VMOVUPD Y4, (R12)(CX*1)
	VMOVUPD Y6, (R13)(CX*1)
	ADDQ    $32, CX
	JMP     loop4

done4:
	VZEROUPPER
	RET
