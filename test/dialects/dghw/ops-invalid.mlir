// Every verifier error of dghw.
// Each chunk holds one faulty op; its message is the first line xdsl-opt prints for the chunk.
// RUN: dg-opt %s --split-input-file --verify-diagnostics | filecheck %s

// No float exists on the device.
func.func @float_operand(%a: tensor<?x4xf32>, %b: tensor<?x4xi32>) {
  %s = dghw.add %a, %b : (tensor<?x4xf32>, tensor<?x4xi32>) -> tensor<?x4xi32>
  func.return
}
// CHECK: operand #0 must be an i8/i32 tensor, got tensor<?x4xf32>

// -----

func.func @i16_result(%a: tensor<?x4xi8>) {
  %r = dghw.reshape %a : tensor<?x4xi8> -> tensor<?x4xi16>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result #0 must be an i8/i32 tensor, got tensor<?x4xi16>

// -----

func.func @constant_type() {
  %c = dghw.constant {value = dense<1> : tensor<4xi8>} : tensor<4xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: value type must equal the result type

// -----

func.func @conv_input_i8(%x: tensor<?x4x4x1xi32>, %w: tensor<2x3x3x1xi8>, %b: tensor<2xi32>) {
  %acc = dghw.conv2d %x, %w, %b {stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, input_zp = 0 : i32, weight_zp = 0 : i32} : (tensor<?x4x4x1xi32>, tensor<2x3x3x1xi8>, tensor<2xi32>) -> tensor<?x2x2x2xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: input must be an i8 tensor, got tensor<?x4x4x1xi32>

// -----

func.func @conv_accumulator(%x: tensor<?x4x4x1xi8>, %w: tensor<2x3x3x1xi8>, %b: tensor<2xi32>) {
  %acc = dghw.conv2d %x, %w, %b {stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, input_zp = 0 : i32, weight_zp = 0 : i32} : (tensor<?x4x4x1xi8>, tensor<2x3x3x1xi8>, tensor<2xi32>) -> tensor<?x2x2x2xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result must be an i32 tensor, got tensor<?x2x2x2xi8>

// -----

func.func @conv_input_zp(%x: tensor<?x4x4x1xi8>, %w: tensor<2x3x3x1xi8>, %b: tensor<2xi32>) {
  %acc = dghw.conv2d %x, %w, %b {stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, input_zp = 128 : i32, weight_zp = 0 : i32} : (tensor<?x4x4x1xi8>, tensor<2x3x3x1xi8>, tensor<2xi32>) -> tensor<?x2x2x2xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: input_zp 128 does not fit the i8 operand

// -----

func.func @conv_stride(%x: tensor<?x4x4x1xi8>, %w: tensor<2x3x3x1xi8>, %b: tensor<2xi32>) {
  %acc = dghw.conv2d %x, %w, %b {stride = array<i64: 1, -1>, pad = array<i64: 0, 0, 0, 0>, input_zp = 0 : i32, weight_zp = 0 : i32} : (tensor<?x4x4x1xi8>, tensor<2x3x3x1xi8>, tensor<2xi32>) -> tensor<?x2x2x2xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: 'stride' entries must be >= 1, got [1, -1]

// -----

func.func @conv_pad(%x: tensor<?x4x4x1xi8>, %w: tensor<2x3x3x1xi8>, %b: tensor<2xi32>) {
  %acc = dghw.conv2d %x, %w, %b {stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, -2>, input_zp = 0 : i32, weight_zp = 0 : i32} : (tensor<?x4x4x1xi8>, tensor<2x3x3x1xi8>, tensor<2xi32>) -> tensor<?x2x2x2xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: 'pad' entries must be >= 0, got [0, 0, 0, -2]

// -----

func.func @conv_rank(%x: tensor<?x4x4xi8>, %w: tensor<2x3x3x1xi8>, %b: tensor<2xi32>) {
  %acc = dghw.conv2d %x, %w, %b {stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, input_zp = 0 : i32, weight_zp = 0 : i32} : (tensor<?x4x4xi8>, tensor<2x3x3x1xi8>, tensor<2xi32>) -> tensor<?x2x2x2xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: input and weight must be rank 4 (NHWC, OHWI)

// -----

func.func @conv_channels(%x: tensor<?x4x4x3xi8>, %w: tensor<2x3x3x1xi8>, %b: tensor<2xi32>) {
  %acc = dghw.conv2d %x, %w, %b {stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, input_zp = 0 : i32, weight_zp = 0 : i32} : (tensor<?x4x4x3xi8>, tensor<2x3x3x1xi8>, tensor<2xi32>) -> tensor<?x2x2x2xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: weight input-channel axis has shape [1], expected [3]

// -----

// NHWC: pad [top, bottom, left, right] = [1, 1, 0, 0] gives 4 rows and 2 columns.
func.func @conv_result(%x: tensor<?x4x4x1xi8>, %w: tensor<2x3x3x1xi8>, %b: tensor<2xi32>) {
  %acc = dghw.conv2d %x, %w, %b {stride = array<i64: 1, 1>, pad = array<i64: 1, 1, 0, 0>, input_zp = 0 : i32, weight_zp = 0 : i32} : (tensor<?x4x4x1xi8>, tensor<2x3x3x1xi8>, tensor<2xi32>) -> tensor<?x2x4x2xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result has shape [?x2x4x2], expected [?x4x2x2]

// -----

func.func @fc_rank(%x: tensor<8xi8>, %w: tensor<3x8xi8>, %b: tensor<3xi32>) {
  %y = dghw.fully_connected %x, %w, %b {input_zp = 0 : i32, weight_zp = 0 : i32} : (tensor<8xi8>, tensor<3x8xi8>, tensor<3xi32>) -> tensor<3xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: weight must be rank 2 and input at least rank 2

// -----

func.func @fc_bias(%x: tensor<?x8xi8>, %w: tensor<3x8xi8>, %b: tensor<4xi32>) {
  %y = dghw.fully_connected %x, %w, %b {input_zp = 0 : i32, weight_zp = 0 : i32} : (tensor<?x8xi8>, tensor<3x8xi8>, tensor<4xi32>) -> tensor<?x3xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: bias has shape [4], expected [3]

// -----

func.func @fc_weight_zp(%x: tensor<?x8xi8>, %w: tensor<3x8xi8>, %b: tensor<3xi32>) {
  %y = dghw.fully_connected %x, %w, %b {input_zp = 0 : i32, weight_zp = -129 : i32} : (tensor<?x8xi8>, tensor<3x8xi8>, tensor<3xi32>) -> tensor<?x3xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: weight_zp -129 does not fit the i8 operand

// -----

// TOSA: the zero point of an i32 operand is 0.
func.func @rescale_i32_zp(%acc: tensor<?x4xi32>) {
  %r = dghw.rescale %acc {multiplier = array<i32: 1073741824>, shift = array<i32: 30>, input_zp = 1 : i32, output_zp = 0 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32} : tensor<?x4xi32> -> tensor<?x4xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: input_zp must be 0 for an i32 operand (TOSA)

// -----

func.func @rescale_output_zp(%acc: tensor<?x4xi32>) {
  %r = dghw.rescale %acc {multiplier = array<i32: 1073741824>, shift = array<i32: 30>, input_zp = 0 : i32, output_zp = 300 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32} : tensor<?x4xi32> -> tensor<?x4xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: output_zp 300 does not fit the i8 operand

// -----

func.func @rescale_shape(%acc: tensor<?x4xi32>) {
  %r = dghw.rescale %acc {multiplier = array<i32: 1073741824>, shift = array<i32: 30>, input_zp = 0 : i32, output_zp = 0 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32} : tensor<?x4xi32> -> tensor<?x2x2xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result has shape [?x2x2], expected [?x4]

// -----

func.func @rescale_shift_count(%acc: tensor<?x2xi32>) {
  %r = dghw.rescale %acc {multiplier = array<i32: 1073741824, 1073741824>, shift = array<i32: 30>, input_zp = 0 : i32, output_zp = 0 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32} : tensor<?x2xi32> -> tensor<?x2xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: 'shift' must have 2 elements, got 1

// -----

// Per-channel parameters run along the last axis.
func.func @rescale_channels(%acc: tensor<?x3xi32>) {
  %r = dghw.rescale %acc {multiplier = array<i32: 1073741824, 1073741824>, shift = array<i32: 30, 30>, input_zp = 0 : i32, output_zp = 0 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32} : tensor<?x3xi32> -> tensor<?x3xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: per-channel axis has shape [3], expected [2]

// -----

func.func @rescale_multiplier(%acc: tensor<?x4xi32>) {
  %r = dghw.rescale %acc {multiplier = array<i32: -5>, shift = array<i32: 30>, input_zp = 0 : i32, output_zp = 0 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32} : tensor<?x4xi32> -> tensor<?x4xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: multipliers must lie in [0, 2^31)

// -----

func.func @rescale_shift(%acc: tensor<?x4xi32>) {
  %r = dghw.rescale %acc {multiplier = array<i32: 1073741824>, shift = array<i32: 63>, input_zp = 0 : i32, output_zp = 0 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32} : tensor<?x4xi32> -> tensor<?x4xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: shifts must lie in [2, 62] (TOSA SINGLE_ROUND)

// -----

func.func @rescale_clamp(%acc: tensor<?x4xi32>) {
  %r = dghw.rescale %acc {multiplier = array<i32: 1073741824>, shift = array<i32: 30>, input_zp = 0 : i32, output_zp = 0 : i32, clamp_min = 0 : i32, clamp_max = 128 : i32} : tensor<?x4xi32> -> tensor<?x4xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: clamp bounds [0, 128] must lie within [-128, 127]

// -----

func.func @rescale_clamp_order(%acc: tensor<?x4xi32>) {
  %r = dghw.rescale %acc {multiplier = array<i32: 1073741824>, shift = array<i32: 30>, input_zp = 0 : i32, output_zp = 0 : i32, clamp_min = 10 : i32, clamp_max = 9 : i32} : tensor<?x4xi32> -> tensor<?x4xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: clamp bounds [10, 9] must lie within [-128, 127]

// -----

func.func @add_i8(%a: tensor<?x4xi8>, %b: tensor<?x4xi8>) {
  %s = dghw.add %a, %b : (tensor<?x4xi8>, tensor<?x4xi8>) -> tensor<?x4xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: lhs must be an i32 tensor, got tensor<?x4xi8>

// -----

func.func @add_shape(%a: tensor<?x4xi32>, %b: tensor<?x4xi32>) {
  %s = dghw.add %a, %b : (tensor<?x4xi32>, tensor<?x4xi32>) -> tensor<?x5xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result has shape [?x5], expected [?x4]

// -----

func.func @reshape_element_type(%a: tensor<?x4xi8>) {
  %r = dghw.reshape %a : tensor<?x4xi8> -> tensor<?x4xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: input and result element types differ

// -----

func.func @reshape_dynamic(%a: tensor<?x?xi8>) {
  %r = dghw.reshape %a : tensor<?x?xi8> -> tensor<?x4xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: only the batch axis may be dynamic

// -----

func.func @reshape_count(%a: tensor<?x2x4xi8>) {
  %r = dghw.reshape %a : tensor<?x2x4xi8> -> tensor<?x6xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: element count per batch item changes (8 -> 6)

// -----

func.func @reshape_batch(%a: tensor<3x8xi8>) {
  %r = dghw.reshape %a : tensor<3x8xi8> -> tensor<6x4xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dghw.reshape cannot change the batch-axis extent (3 -> 6)

// -----

func.func @transpose_perm_length(%a: tensor<?x2x3xi8>) {
  %t = dghw.transpose %a {perm = array<i64: 0, 1>} : tensor<?x2x3xi8> -> tensor<?x2x3xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: 'perm' must have 3 elements, got 2

// -----

func.func @transpose_perm(%a: tensor<?x2x3xi8>) {
  %t = dghw.transpose %a {perm = array<i64: 0, 1, 1>} : tensor<?x2x3xi8> -> tensor<?x2x2xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: perm [0, 1, 1] is not a permutation of the 3 axes

// -----

func.func @transpose_batch(%a: tensor<2x2x3xi8>) {
  %t = dghw.transpose %a {perm = array<i64: 1, 0, 2>} : tensor<2x2x3xi8> -> tensor<2x2x3xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: transpose cannot move the batch axis

// -----

func.func @transpose_result(%a: tensor<?x2x3xi8>) {
  %t = dghw.transpose %a {perm = array<i64: 0, 2, 1>} : tensor<?x2x3xi8> -> tensor<?x2x3xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result has shape [?x2x3], expected [?x3x2]
