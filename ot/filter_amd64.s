//go:build !purego

#include "textflag.h"

// func firstBelowAVX2(row, pd *float32, n int, thr float32) int
//
// Returns the smallest multiple of 8, k < n, such that row[k+l] − pd[k+l] <
// thr for some l in [0, 8), or n if there is none. n is a multiple of 8.
TEXT ·firstBelowAVX2(SB), NOSPLIT, $0-40
	MOVQ         row+0(FP), SI
	MOVQ         pd+8(FP), DI
	MOVQ         n+16(FP), DX
	VBROADCASTSS thr+24(FP), Y0
	XORQ         CX, CX

loop16:
	LEAQ      16(CX), AX
	CMPQ      AX, DX
	JGT       tail8
	VMOVUPS   (SI)(CX*4), Y1
	VMOVUPS   32(SI)(CX*4), Y2
	VSUBPS    (DI)(CX*4), Y1, Y1
	VSUBPS    32(DI)(CX*4), Y2, Y2
	VCMPPS    $1, Y0, Y1, Y1
	VCMPPS    $1, Y0, Y2, Y2
	VORPS     Y1, Y2, Y3
	VMOVMSKPS Y3, AX
	TESTL     AX, AX
	JNZ       found16
	ADDQ      $16, CX
	JMP       loop16

found16:
	VMOVMSKPS Y1, AX
	TESTL     AX, AX
	JNZ       done
	ADDQ      $8, CX
	JMP       done

tail8:
	LEAQ      8(CX), AX
	CMPQ      AX, DX
	JGT       done
	VMOVUPS   (SI)(CX*4), Y1
	VSUBPS    (DI)(CX*4), Y1, Y1
	VCMPPS    $1, Y0, Y1, Y1
	VMOVMSKPS Y1, AX
	TESTL     AX, AX
	JNZ       done
	ADDQ      $8, CX

done:
	VZEROUPPER
	MOVQ CX, ret+32(FP)
	RET
