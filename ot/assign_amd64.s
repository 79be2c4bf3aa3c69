//go:build !purego

#include "textflag.h"

// func colMinAVX2(row, v *float64, argmin *int, n int, i int)
//
// For j < n (a multiple of 4): if row[j] < v[j], then v[j] = row[j] and
// argmin[j] = i (a strict comparison: ties keep the earlier row).
TEXT ·colMinAVX2(SB), NOSPLIT, $0-40
	MOVQ         row+0(FP), SI
	MOVQ         v+8(FP), DI
	MOVQ         argmin+16(FP), BX
	MOVQ         n+24(FP), CX
	MOVQ         i+32(FP), AX
	MOVQ         AX, X7
	VPBROADCASTQ X7, Y7
	SHLQ         $3, CX
	XORQ         DX, DX

cmloop:
	CMPQ      DX, CX
	JGE       cmdone
	VMOVUPD   (SI)(DX*1), Y0
	VMOVUPD   (DI)(DX*1), Y1
	VCMPPD    $1, Y1, Y0, Y2
	VBLENDVPD Y2, Y0, Y1, Y1
	VMOVUPD   Y1, (DI)(DX*1)
	VMOVDQU   (BX)(DX*1), Y3
	VBLENDVPD Y2, Y7, Y3, Y3
	VMOVDQU   Y3, (BX)(DX*1)
	ADDQ      $32, DX
	JMP       cmloop

cmdone:
	VZEROUPPER
	RET

// func rowMin2AVX2(row, v *float64, n int, u *[8]float64, j *[8]int)
//
// Scans h_t = row[t] − v[t] for t < n (a multiple of 4) in four lanes
// (lane t mod 4), keeping in each lane the smallest value u1 at its first
// index j1 and the next smallest u2 (ties: the earlier index) at j2, as
// the scalar scan of one lane would: u[0:4], j[0:4] hold (u1, j1) and
// u[4:8], j[4:8] hold (u2, j2) of the lanes; +Inf and −1 where a lane has
// no such entry.
TEXT ·rowMin2AVX2(SB), NOSPLIT, $0-40
	MOVQ         row+0(FP), SI
	MOVQ         v+8(FP), DI
	MOVQ         n+16(FP), CX
	MOVQ         $0x7ff0000000000000, AX
	MOVQ         AX, X0
	VBROADCASTSD X0, Y0             // U1 = +Inf
	VMOVAPD      Y0, Y1             // U2 = +Inf
	VPCMPEQQ     Y2, Y2, Y2         // J1 = −1
	VMOVDQA      Y2, Y3             // J2 = −1
	MOVQ         $0, AX
	MOVQ         AX, X4
	MOVQ         $1, AX
	PINSRQ       $1, AX, X4
	MOVQ         $2, AX
	MOVQ         AX, X5
	MOVQ         $3, AX
	PINSRQ       $1, AX, X5
	VINSERTI128  $1, X5, Y4, Y4     // J = (0, 1, 2, 3)
	MOVQ         $4, AX
	MOVQ         AX, X5
	VPBROADCASTQ X5, Y5             // 4 in every lane
	SHLQ         $3, CX
	XORQ         DX, DX

m2loop:
	CMPQ      DX, CX
	JGE       m2done
	VMOVUPD   (SI)(DX*1), Y6
	VSUBPD    (DI)(DX*1), Y6, Y6    // H
	VCMPPD    $1, Y1, Y6, Y7        // m2 = H < U2
	VCMPPD    $1, Y0, Y6, Y8        // m1 = H < U1
	VBLENDVPD Y7, Y6, Y1, Y9        // m2 ? H : U2
	VBLENDVPD Y8, Y0, Y9, Y1        // U2 = m1 ? U1 : that
	VBLENDVPD Y7, Y4, Y3, Y9        // m2 ? J : J2
	VBLENDVPD Y8, Y2, Y9, Y3        // J2 = m1 ? J1 : that
	VBLENDVPD Y8, Y6, Y0, Y0        // U1 = m1 ? H : U1
	VBLENDVPD Y8, Y4, Y2, Y2        // J1 = m1 ? J : J1
	VPADDQ    Y5, Y4, Y4
	ADDQ      $32, DX
	JMP       m2loop

m2done:
	MOVQ    u+24(FP), AX
	VMOVUPD Y0, (AX)
	VMOVUPD Y1, 32(AX)
	MOVQ    j+32(FP), AX
	VMOVDQU Y2, (AX)
	VMOVDQU Y3, 32(AX)
	VZEROUPPER
	RET

// func minDiffAVX2(row, v *float64, n int) float64
//
// Returns the smallest row[t] − v[t] over t < n (a multiple of 4), +Inf
// when n = 0.
TEXT ·minDiffAVX2(SB), NOSPLIT, $0-32
	MOVQ         row+0(FP), SI
	MOVQ         v+8(FP), DI
	MOVQ         n+16(FP), CX
	MOVQ         $0x7ff0000000000000, AX
	MOVQ         AX, X0
	VBROADCASTSD X0, Y0
	SHLQ         $3, CX
	XORQ         DX, DX

mdloop:
	CMPQ    DX, CX
	JGE     mddone
	VMOVUPD (SI)(DX*1), Y1
	VSUBPD  (DI)(DX*1), Y1, Y1
	VMINPD  Y1, Y0, Y0
	ADDQ    $32, DX
	JMP     mdloop

mddone:
	VEXTRACTF128 $1, Y0, X1
	VMINPD       X1, X0, X0
	VPERMILPD    $1, X0, X1
	VMINPD       X1, X0, X0
	MOVSD        X0, ret+24(FP)
	VZEROUPPER
	RET

// func relaxMinAVX2(ri, v, d *float64, pred *int, n int, i int, u1 float64) float64
//
// For t < n (a multiple of 4): h = ri[t] − v[t] − u1; where h < d[t],
// d[t] = h and pred[t] = i (a NaN d[t] is never lowered). Returns the
// smallest d[t] afterwards, NaN entries skipped, +Inf if there is none.
// Two groups of four per iteration, with a running minimum each, so that
// the minimum's latency does not bound the loop.
TEXT ·relaxMinAVX2(SB), NOSPLIT, $0-64
	MOVQ         ri+0(FP), SI
	MOVQ         v+8(FP), DI
	MOVQ         d+16(FP), BX
	MOVQ         pred+24(FP), R8
	MOVQ         n+32(FP), CX
	MOVQ         i+40(FP), AX
	MOVQ         AX, X7
	VPBROADCASTQ X7, Y7             // i in every lane
	VBROADCASTSD u1+48(FP), Y6      // u1
	MOVQ         $0x7ff0000000000000, AX
	MOVQ         AX, X0
	VBROADCASTSD X0, Y0             // B0 = +Inf
	VMOVAPD      Y0, Y1             // B1 = +Inf
	SHLQ         $3, CX
	XORQ         DX, DX
	MOVQ         CX, R11
	ANDQ         $-64, R11          // bytes in whole pairs of groups

rmloop2:
	CMPQ       DX, R11
	JGE        rmloop1
	VMOVUPD    (SI)(DX*1), Y8
	VMOVUPD    32(SI)(DX*1), Y12
	VSUBPD     (DI)(DX*1), Y8, Y8
	VSUBPD     32(DI)(DX*1), Y12, Y12
	VSUBPD     Y6, Y8, Y8            // H = ri − v − u1
	VSUBPD     Y6, Y12, Y12
	VMOVUPD    (BX)(DX*1), Y9        // D
	VMOVUPD    32(BX)(DX*1), Y13
	VCMPPD     $1, Y9, Y8, Y10       // m = H < D
	VCMPPD     $1, Y13, Y12, Y14
	VMINPD     Y9, Y8, Y9            // D = H < D ? H : D
	VMINPD     Y13, Y12, Y13
	VMOVUPD    Y9, (BX)(DX*1)
	VMOVUPD    Y13, 32(BX)(DX*1)
	VPMASKMOVQ Y7, Y10, (R8)(DX*1)   // pred = i where m
	VPMASKMOVQ Y7, Y14, 32(R8)(DX*1)
	VMINPD     Y0, Y9, Y0            // B = D < B ? D : B (NaN D skipped)
	VMINPD     Y1, Y13, Y1
	ADDQ       $64, DX
	JMP        rmloop2

rmloop1:
	CMPQ       DX, CX
	JGE        rmdone
	VMOVUPD    (SI)(DX*1), Y8
	VSUBPD     (DI)(DX*1), Y8, Y8
	VSUBPD     Y6, Y8, Y8
	VMOVUPD    (BX)(DX*1), Y9
	VCMPPD     $1, Y9, Y8, Y10
	VMINPD     Y9, Y8, Y9
	VMOVUPD    Y9, (BX)(DX*1)
	VPMASKMOVQ Y7, Y10, (R8)(DX*1)
	VMINPD     Y0, Y9, Y0
	ADDQ       $32, DX
	JMP        rmloop1

rmdone:
	VMINPD       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMINPD       X1, X0, X0
	VPERMILPD    $1, X0, X1
	VMINPD       X1, X0, X0
	MOVSD        X0, ret+56(FP)
	VZEROUPPER
	RET

// func firstEqualAVX2(d *float64, n int, x float64) int
//
// Returns the first t < n (a multiple of 4) with d[t] == x, or −1.
TEXT ·firstEqualAVX2(SB), NOSPLIT, $0-32
	MOVQ         d+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSD x+16(FP), Y6
	XORQ         DX, DX

feloop:
	CMPQ      DX, CX
	JGE       fenone
	VCMPPD    $0, (SI)(DX*8), Y6, Y8
	VMOVMSKPD Y8, AX
	TESTQ     AX, AX
	JNZ       fehit
	ADDQ      $4, DX
	JMP       feloop

fehit:
	BSFQ AX, AX
	ADDQ AX, DX
	MOVQ DX, ret+24(FP)
	VZEROUPPER
	RET

fenone:
	MOVQ $-1, ret+24(FP)
	VZEROUPPER
	RET
