// Every verifier error of the TOSA 1.0 ops dg adds to xDSL's tosa dialect (dialects/tosa.py).
// Each chunk holds one faulty op; tosa-opt --tosa-validate checks everything else.
// RUN: dg-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @const_shape_rank() {
  %s = "tosa.const_shape"() <{values = dense<[1, 2, 3]> : tensor<3xindex>}> : () -> !tosa.shape<2>
  func.return
}
// CHECK: values must hold one entry per extent of the shape

// -----

func.func @conv2d_rank(%x: tensor<5x5x3xi8>, %w: tensor<4x3x3x3xi8>, %b: tensor<4xi32>, %z: tensor<1xi8>) {
  %c = "tosa.conv2d"(%x, %w, %b, %z, %z) <{pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, acc_type = i32}> : (tensor<5x5x3xi8>, tensor<4x3x3x3xi8>, tensor<4xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<3x3x4xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: input must be rank 4, got tensor<5x5x3xi8>

// -----

func.func @broadcast_rank(%x: tensor<2x3xi32>, %c: tensor<1xi32>) {
  %g = "tosa.greater"(%x, %c) : (tensor<2x3xi32>, tensor<1xi32>) -> tensor<2x3xi1>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: input1 and input2 must have equal ranks (TOSA broadcasting)
