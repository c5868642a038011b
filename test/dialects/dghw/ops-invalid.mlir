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

// -----

func.func @depthwise_rank(%x: tensor<?x5x5x2xi8>, %w: tensor<2x3x3x1xi8>, %b: tensor<2xi32>) {
  %d = dghw.depthwise_conv2d %x, %w, %b {stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, input_zp = 0 : i32, weight_zp = 0 : i32} : (tensor<?x5x5x2xi8>, tensor<2x3x3x1xi8>, tensor<2xi32>) -> tensor<?x3x3x2xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: input must be rank 4 (NHWC) and weight rank 3 (KH, KW, C)

// -----

func.func @depthwise_channels(%x: tensor<?x5x5x2xi8>, %w: tensor<3x3x3xi8>, %b: tensor<2xi32>) {
  %d = dghw.depthwise_conv2d %x, %w, %b {stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, input_zp = 0 : i32, weight_zp = 0 : i32} : (tensor<?x5x5x2xi8>, tensor<3x3x3xi8>, tensor<2xi32>) -> tensor<?x3x3x3xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: weight channel axis has shape [3], expected [2]

// -----

func.func @depthwise_bias(%x: tensor<?x5x5x2xi8>, %w: tensor<3x3x2xi8>, %b: tensor<3xi32>) {
  %d = dghw.depthwise_conv2d %x, %w, %b {stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, input_zp = 0 : i32, weight_zp = 0 : i32} : (tensor<?x5x5x2xi8>, tensor<3x3x2xi8>, tensor<3xi32>) -> tensor<?x3x3x2xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: bias has shape [3], expected [2]

// -----

// Rows (5 + 1 + 0 - 3) / 2 + 1 = 2, columns 5 - 3 + 1 = 3.
func.func @depthwise_result(%x: tensor<?x5x5x2xi8>, %w: tensor<3x3x2xi8>, %b: tensor<2xi32>) {
  %d = dghw.depthwise_conv2d %x, %w, %b {stride = array<i64: 2, 1>, pad = array<i64: 1, 0, 0, 0>, input_zp = 0 : i32, weight_zp = 0 : i32} : (tensor<?x5x5x2xi8>, tensor<3x3x2xi8>, tensor<2xi32>) -> tensor<?x3x3x2xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result has shape [?x3x3x2], expected [?x2x3x2]

// -----

func.func @depthwise_accumulator(%x: tensor<?x5x5x2xi8>, %w: tensor<3x3x2xi8>, %b: tensor<2xi32>) {
  %d = dghw.depthwise_conv2d %x, %w, %b {stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, input_zp = 0 : i32, weight_zp = 0 : i32} : (tensor<?x5x5x2xi8>, tensor<3x3x2xi8>, tensor<2xi32>) -> tensor<?x3x3x2xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result must be an i32 tensor, got tensor<?x3x3x2xi8>

// -----

func.func @pool_rank(%x: tensor<?x5x5xi8>) {
  %m = dghw.max_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>} : tensor<?x5x5xi8> -> tensor<?x2x2xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: input and result must be rank 4 (NHWC)

// -----

func.func @pool_i32(%x: tensor<?x5x5x2xi32>) {
  %m = dghw.max_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>} : tensor<?x5x5x2xi32> -> tensor<?x2x2x2xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: input must be an i8 tensor, got tensor<?x5x5x2xi32>

// -----

// Neither the floor (2) nor the ceil (3) window count.
func.func @pool_windows(%x: tensor<?x5x5x2xi8>) {
  %m = dghw.max_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>} : tensor<?x5x5x2xi8> -> tensor<?x1x2x2xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result has 1 windows along spatial axis 0, expected 2 or 3

// -----

func.func @pool_channels(%x: tensor<?x5x5x2xi8>) {
  %m = dghw.max_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>} : tensor<?x5x5x2xi8> -> tensor<?x2x2x3xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result channel axis has shape [3], expected [2]

// -----

func.func @pool_batch(%x: tensor<2x5x5x2xi8>) {
  %m = dghw.max_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>} : tensor<2x5x5x2xi8> -> tensor<1x2x2x2xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dghw.max_pool2d cannot change the batch-axis extent (2 -> 1)

// -----

func.func @avg_pool_zero_point(%x: tensor<?x5x5x2xi8>) {
  %a = dghw.avg_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, count_include_pad = true, input_zp = 0 : i32, output_zp = 128 : i32} : tensor<?x5x5x2xi8> -> tensor<?x2x2x2xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: output_zp 128 does not fit the i8 operand

// -----

// Without count_include_pad, a window of padding only would divide by 0.
func.func @avg_pool_overlap(%x: tensor<?x5x5x2xi8>) {
  %a = dghw.avg_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 3, 0, 0>, count_include_pad = false, input_zp = 0 : i32, output_zp = 0 : i32} : tensor<?x5x5x2xi8> -> tensor<?x4x2x2xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: without count_include_pad every window must overlap the input: pad [0, 3, 0, 0] must be below the kernel [2, 2]

// -----

func.func @avg_pool_pad(%x: tensor<?x5x5x2xi8>) {
  %a = dghw.avg_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0>, count_include_pad = true, input_zp = 0 : i32, output_zp = 0 : i32} : tensor<?x5x5x2xi8> -> tensor<?x2x2x2xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: 'pad' must have 4 elements, got 2

// -----

func.func @table_length(%x: tensor<?x4xi8>) {
  %t = dghw.table %x {table = array<i8: 0, 1, 2>} : tensor<?x4xi8> -> tensor<?x4xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: 'table' must have 256 entries, got 3

// -----

func.func @table_result(%x: tensor<?x4xi8>) {
  %t = dghw.table %x {table = array<i8: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : tensor<?x4xi8> -> tensor<?x5xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result has shape [?x5], expected [?x4]

// -----

func.func @softmax_length(%x: tensor<?x10xi8>) {
  %s = dghw.softmax %x {exp_table = array<i32: 65536, 62340, 59299, 56407, 53656, 51039, 48550, 46182, 43930, 41788, 39750, 37811, 35967, 34213, 32544, 30957, 29447, 28011, 26645, 25345, 24109, 22934, 21815, 20751, 19739, 18776, 17861, 16990, 16161, 15373, 14623, 13910, 13231, 12586, 11972, 11388, 10833, 10305, 9802, 9324, 8869, 8437, 8025, 7634, 7262, 6907, 6571, 6250, 5945, 5655, 5380, 5117, 4868, 4630, 4404, 4190, 3985, 3791, 3606, 3430, 3263, 3104, 2952, 2808, 2671, 2541, 2417, 2299, 2187, 2080, 1979, 1882, 1791, 1703, 1620, 1541, 1466, 1395, 1327, 1262, 1200, 1142, 1086, 1033, 983, 935, 889, 846, 805, 765, 728, 693, 659, 627, 596, 567, 539, 513, 488, 464, 442, 420, 400, 380, 362, 344, 327, 311, 296, 282, 268, 255, 242, 231, 219, 209, 198, 189, 180, 171, 162, 155, 147, 140, 133, 127, 120, 114, 109, 104, 99, 94, 89, 85, 81, 77, 73, 69, 66, 63, 60, 57, 54, 51, 49, 47, 44, 42, 40, 38, 36, 34, 33, 31, 30, 28, 27, 26, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 15, 14, 13, 13, 12, 11, 11, 10, 10, 9, 9, 9, 8, 8, 7, 7, 7, 6, 6, 6, 5, 5, 5, 5, 4, 4, 4, 4, 4, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, axis = 1 : i64} : tensor<?x10xi8> -> tensor<?x10xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: 'exp_table' must have 256 entries, got 255

// -----

func.func @softmax_negative(%x: tensor<?x10xi8>) {
  %s = dghw.softmax %x {exp_table = array<i32: 65536, 62340, 59299, 56407, 53656, 51039, 48550, 46182, 43930, 41788, 39750, 37811, 35967, 34213, 32544, 30957, 29447, 28011, 26645, 25345, 24109, 22934, 21815, 20751, 19739, 18776, 17861, 16990, 16161, 15373, 14623, 13910, 13231, 12586, 11972, 11388, 10833, 10305, 9802, 9324, 8869, 8437, 8025, 7634, 7262, 6907, 6571, 6250, 5945, 5655, 5380, 5117, 4868, 4630, 4404, 4190, 3985, 3791, 3606, 3430, 3263, 3104, 2952, 2808, 2671, 2541, 2417, 2299, 2187, 2080, 1979, 1882, 1791, 1703, 1620, 1541, 1466, 1395, 1327, 1262, 1200, 1142, 1086, 1033, 983, 935, 889, 846, 805, 765, 728, 693, 659, 627, 596, 567, 539, 513, 488, 464, 442, 420, 400, 380, 362, 344, 327, 311, 296, 282, 268, 255, 242, 231, 219, 209, 198, 189, 180, 171, 162, 155, 147, 140, 133, 127, 120, 114, 109, 104, 99, 94, 89, 85, 81, 77, 73, 69, 66, 63, 60, 57, 54, 51, 49, 47, 44, 42, 40, 38, 36, 34, 33, 31, 30, 28, 27, 26, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 15, 14, 13, 13, 12, 11, 11, 10, 10, 9, 9, 9, 8, 8, 7, 7, 7, 6, 6, 6, 5, 5, 5, 5, 4, 4, 4, 4, 4, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1>, axis = 1 : i64} : tensor<?x10xi8> -> tensor<?x10xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: 'exp_table' entries must be >= 0

// -----

// 40000 * 65536 > 2^31 - 1.
func.func @softmax_overflow(%x: tensor<?x40000xi8>) {
  %s = dghw.softmax %x {exp_table = array<i32: 65536, 62340, 59299, 56407, 53656, 51039, 48550, 46182, 43930, 41788, 39750, 37811, 35967, 34213, 32544, 30957, 29447, 28011, 26645, 25345, 24109, 22934, 21815, 20751, 19739, 18776, 17861, 16990, 16161, 15373, 14623, 13910, 13231, 12586, 11972, 11388, 10833, 10305, 9802, 9324, 8869, 8437, 8025, 7634, 7262, 6907, 6571, 6250, 5945, 5655, 5380, 5117, 4868, 4630, 4404, 4190, 3985, 3791, 3606, 3430, 3263, 3104, 2952, 2808, 2671, 2541, 2417, 2299, 2187, 2080, 1979, 1882, 1791, 1703, 1620, 1541, 1466, 1395, 1327, 1262, 1200, 1142, 1086, 1033, 983, 935, 889, 846, 805, 765, 728, 693, 659, 627, 596, 567, 539, 513, 488, 464, 442, 420, 400, 380, 362, 344, 327, 311, 296, 282, 268, 255, 242, 231, 219, 209, 198, 189, 180, 171, 162, 155, 147, 140, 133, 127, 120, 114, 109, 104, 99, 94, 89, 85, 81, 77, 73, 69, 66, 63, 60, 57, 54, 51, 49, 47, 44, 42, 40, 38, 36, 34, 33, 31, 30, 28, 27, 26, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 15, 14, 13, 13, 12, 11, 11, 10, 10, 9, 9, 9, 8, 8, 7, 7, 7, 6, 6, 6, 5, 5, 5, 5, 4, 4, 4, 4, 4, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, axis = 1 : i64} : tensor<?x40000xi8> -> tensor<?x40000xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: the exp sum over 40000 elements can overflow i32 (largest exp_table entry 65536)

// -----

func.func @softmax_batch(%x: tensor<?x10xi8>) {
  %s = dghw.softmax %x {exp_table = array<i32: 65536, 62340, 59299, 56407, 53656, 51039, 48550, 46182, 43930, 41788, 39750, 37811, 35967, 34213, 32544, 30957, 29447, 28011, 26645, 25345, 24109, 22934, 21815, 20751, 19739, 18776, 17861, 16990, 16161, 15373, 14623, 13910, 13231, 12586, 11972, 11388, 10833, 10305, 9802, 9324, 8869, 8437, 8025, 7634, 7262, 6907, 6571, 6250, 5945, 5655, 5380, 5117, 4868, 4630, 4404, 4190, 3985, 3791, 3606, 3430, 3263, 3104, 2952, 2808, 2671, 2541, 2417, 2299, 2187, 2080, 1979, 1882, 1791, 1703, 1620, 1541, 1466, 1395, 1327, 1262, 1200, 1142, 1086, 1033, 983, 935, 889, 846, 805, 765, 728, 693, 659, 627, 596, 567, 539, 513, 488, 464, 442, 420, 400, 380, 362, 344, 327, 311, 296, 282, 268, 255, 242, 231, 219, 209, 198, 189, 180, 171, 162, 155, 147, 140, 133, 127, 120, 114, 109, 104, 99, 94, 89, 85, 81, 77, 73, 69, 66, 63, 60, 57, 54, 51, 49, 47, 44, 42, 40, 38, 36, 34, 33, 31, 30, 28, 27, 26, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 15, 14, 13, 13, 12, 11, 11, 10, 10, 9, 9, 9, 8, 8, 7, 7, 7, 6, 6, 6, 5, 5, 5, 5, 4, 4, 4, 4, 4, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, axis = 0 : i64} : tensor<?x10xi8> -> tensor<?x10xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dghw.softmax cannot operate along the batch axis (axis 0)

// -----

func.func @softmax_axis(%x: tensor<?x10xi8>) {
  %s = dghw.softmax %x {exp_table = array<i32: 65536, 62340, 59299, 56407, 53656, 51039, 48550, 46182, 43930, 41788, 39750, 37811, 35967, 34213, 32544, 30957, 29447, 28011, 26645, 25345, 24109, 22934, 21815, 20751, 19739, 18776, 17861, 16990, 16161, 15373, 14623, 13910, 13231, 12586, 11972, 11388, 10833, 10305, 9802, 9324, 8869, 8437, 8025, 7634, 7262, 6907, 6571, 6250, 5945, 5655, 5380, 5117, 4868, 4630, 4404, 4190, 3985, 3791, 3606, 3430, 3263, 3104, 2952, 2808, 2671, 2541, 2417, 2299, 2187, 2080, 1979, 1882, 1791, 1703, 1620, 1541, 1466, 1395, 1327, 1262, 1200, 1142, 1086, 1033, 983, 935, 889, 846, 805, 765, 728, 693, 659, 627, 596, 567, 539, 513, 488, 464, 442, 420, 400, 380, 362, 344, 327, 311, 296, 282, 268, 255, 242, 231, 219, 209, 198, 189, 180, 171, 162, 155, 147, 140, 133, 127, 120, 114, 109, 104, 99, 94, 89, 85, 81, 77, 73, 69, 66, 63, 60, 57, 54, 51, 49, 47, 44, 42, 40, 38, 36, 34, 33, 31, 30, 28, 27, 26, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 15, 14, 13, 13, 12, 11, 11, 10, 10, 9, 9, 9, 8, 8, 7, 7, 7, 6, 6, 6, 5, 5, 5, 5, 4, 4, 4, 4, 4, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, axis = 2 : i64} : tensor<?x10xi8> -> tensor<?x10xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dghw.softmax: axis 2 is out of range [0, 2)

// -----

func.func @concat_batch(%x: tensor<2x5x5x2xi8>) {
  %c = dghw.concat %x, %x {axis = 0 : i64} : (tensor<2x5x5x2xi8>, tensor<2x5x5x2xi8>) -> tensor<4x5x5x2xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dghw.concat cannot operate along the batch axis (axis 0)

// -----

func.func @concat_i32(%x: tensor<?x5x5x2xi32>) {
  %c = dghw.concat %x, %x {axis = 3 : i64} : (tensor<?x5x5x2xi32>, tensor<?x5x5x2xi32>) -> tensor<?x5x5x4xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: input #0 must be an i8 tensor, got tensor<?x5x5x2xi32>

// -----

func.func @concat_sum(%x: tensor<?x5x5x2xi8>) {
  %c = dghw.concat %x, %x {axis = 3 : i64} : (tensor<?x5x5x2xi8>, tensor<?x5x5x2xi8>) -> tensor<?x5x5x5xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result axis 3 has shape [5], expected [4]

// -----

func.func @resize_mode(%x: tensor<?x5x5x2xi8>) {
  %r = dghw.resize_nearest %x {mode = "bilinear"} : tensor<?x5x5x2xi8> -> tensor<?x10x10x2xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: mode must be one of nearest, nearest-exact, got 'bilinear'

// -----

// In NHWC the channel axis is the last one.
func.func @resize_channels(%x: tensor<?x5x5x2xi8>) {
  %r = dghw.resize_nearest %x {mode = "nearest"} : tensor<?x5x5x2xi8> -> tensor<?x10x10x4xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result non-spatial axes has shape [?x4], expected [?x2]

// -----

func.func @resize_dynamic(%x: tensor<?x5x5x2xi8>) {
  %r = dghw.resize_nearest %x {mode = "nearest"} : tensor<?x5x5x2xi8> -> tensor<?x10x?x2xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: the resized extents must be static

// -----

func.func @slice_shape(%x: tensor<?x5x8xi8>) {
  %s = dghw.slice %x {axis = 2 : i64, start = 2 : i64, end = 6 : i64} : tensor<?x5x8xi8> -> tensor<?x5x3xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result has shape [?x5x3], expected [?x5x4]

// -----

// Logic layers compute on i8 and i32 (other types are the dghw base verifier's error);
// the result keeps the input's element type.
func.func @shift_element_type(%x: tensor<?x4xi8>) {
  %s = dghw.shift %x {direction = "left", shift = 1 : i64} : tensor<?x4xi8> -> tensor<?x4xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result element type i32 differs from the input's i8

// -----

func.func @shift_amount_i8(%x: tensor<?x4xi8>) {
  %s = dghw.shift %x {direction = "left", shift = 8 : i64} : tensor<?x4xi8> -> tensor<?x4xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: shift amount must be in [0, 7], got 8

// -----

func.func @bitwise_value_i8(%x: tensor<?x4xi8>) {
  %b = dghw.bitwise %x {kind = "or", value = 128 : i64} : tensor<?x4xi8> -> tensor<?x4xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: bitwise constant 128 does not fit i8

// -----

func.func @compare_result_i8(%x: tensor<?x4xi8>) {
  %c = dghw.compare %x {kind = "gt", value = 0 : i64} : tensor<?x4xi8> -> tensor<?x4xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: a comparison's result must be an i32 tensor (0/1), got tensor<?x4xi8>

// -----

func.func @compare_threshold_i8(%x: tensor<?x4xi8>) {
  %c = dghw.compare %x {kind = "lt", value = -129 : i64} : tensor<?x4xi8> -> tensor<?x4xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: compare threshold -129 does not fit i8

// -----

// The operands of a logic op on two tensors share one element type: no implicit widening.
func.func @bitwise_tensor_mixed_widths(%x: tensor<?x4xi32>, %y: tensor<?x4xi8>) {
  %b = dghw.bitwise_tensor %x, %y {kind = "or"} : (tensor<?x4xi32>, tensor<?x4xi8>) -> tensor<?x4xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: operands must have one element type, got i32 and i8

// -----

// ... and one shape, the batch axis included: a static 1 does not broadcast against `?`.
func.func @bitwise_tensor_batch_broadcast(%x: tensor<?x4xi32>, %y: tensor<1x4xi32>) {
  %b = dghw.bitwise_tensor %x, %y {kind = "and"} : (tensor<?x4xi32>, tensor<1x4xi32>) -> tensor<?x4xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: operands must have the same shape (no broadcasting), got [?x4] and [1x4]

// -----

func.func @bitwise_tensor_result_type(%x: tensor<?x4xi8>) {
  %b = dghw.bitwise_tensor %x, %x {kind = "xor"} : (tensor<?x4xi8>, tensor<?x4xi8>) -> tensor<?x4xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result element type i32 differs from the input's i8

// -----

func.func @bitwise_tensor_kind(%x: tensor<?x4xi32>) {
  %b = dghw.bitwise_tensor %x, %x {kind = "not"} : (tensor<?x4xi32>, tensor<?x4xi32>) -> tensor<?x4xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: bitwise kind must be one of and, or, xor, got 'not'

// -----

func.func @compare_tensor_result_i8(%x: tensor<?x4xi8>) {
  %c = dghw.compare_tensor %x, %x {kind = "eq"} : (tensor<?x4xi8>, tensor<?x4xi8>) -> tensor<?x4xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: a comparison's result must be an i32 tensor (0/1), got tensor<?x4xi8>

// -----

func.func @compare_tensor_shape(%x: tensor<?x4xi32>) {
  %c = dghw.compare_tensor %x, %x {kind = "ge"} : (tensor<?x4xi32>, tensor<?x4xi32>) -> tensor<?x2x2xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result has shape [?x2x2], expected [?x4]

// -----

func.func @compare_tensor_kind(%x: tensor<?x4xi32>) {
  %c = dghw.compare_tensor %x, %x {kind = "GT"} : (tensor<?x4xi32>, tensor<?x4xi32>) -> tensor<?x4xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: compare kind must be one of gt, ge, lt, le, eq, ne, got 'GT'

// -----

func.func @shift_direction(%x: tensor<?x4xi32>) {
  %s = dghw.shift %x {direction = "up", shift = 1 : i64} : tensor<?x4xi32> -> tensor<?x4xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: shift direction must be one of left, right, got 'up'

// -----

func.func @shift_amount(%x: tensor<?x4xi32>) {
  %s = dghw.shift %x {direction = "right", shift = 32 : i64} : tensor<?x4xi32> -> tensor<?x4xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: shift amount must be in [0, 31], got 32

// -----

func.func @shift_shape(%x: tensor<?x4xi32>) {
  %s = dghw.shift %x {direction = "right", shift = 1 : i64} : tensor<?x4xi32> -> tensor<?x5xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result has shape [?x5], expected [?x4]

// -----

func.func @bitwise_kind(%x: tensor<?x4xi32>) {
  %b = dghw.bitwise %x {kind = "nand", value = 1 : i64} : tensor<?x4xi32> -> tensor<?x4xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: bitwise kind must be one of and, or, xor, got 'nand'

// -----

func.func @bitwise_value(%x: tensor<?x4xi32>) {
  %b = dghw.bitwise %x {kind = "and", value = 4294967295 : i64} : tensor<?x4xi32> -> tensor<?x4xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: bitwise constant 4294967295 does not fit i32

// -----

func.func @tile_rank(%x: tensor<?x4xi32>) {
  %t = dghw.tile %x {multiples = array<i64: 1, 2, 2>} : tensor<?x4xi32> -> tensor<?x8xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: repeats must have one entry per input axis (2), got 3

// -----

func.func @tile_batch(%x: tensor<?x4xi32>) {
  %t = dghw.tile %x {multiples = array<i64: 2, 1>} : tensor<?x4xi32> -> tensor<?x4xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: cannot repeat along the batch axis (axis 0)

// -----

func.func @tile_zero(%x: tensor<?x4xi32>) {
  %t = dghw.tile %x {multiples = array<i64: 1, 0>} : tensor<?x4xi32> -> tensor<?x0xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: repeats must be >= 1

// -----

func.func @tile_shape(%x: tensor<?x4xi32>) {
  %t = dghw.tile %x {multiples = array<i64: 1, 2>} : tensor<?x4xi32> -> tensor<?x4xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result has shape [?x4], expected [?x8]

// -----

func.func @mul_constant_rank(%x: tensor<?x5x8xi8>, %c: tensor<5x8xi8>) {
  %m = dghw.mul %x, %c {input_zp = 0 : i32, constant_zp = 0 : i32} : (tensor<?x5x8xi8>, tensor<5x8xi8>) -> tensor<?x5x8xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: constant must have the input's rank

// -----

func.func @mul_i32_input(%x: tensor<?x5x8xi32>, %c: tensor<1x5x8xi8>) {
  %m = dghw.mul %x, %c {input_zp = 0 : i32, constant_zp = 0 : i32} : (tensor<?x5x8xi32>, tensor<1x5x8xi8>) -> tensor<?x5x8xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: input must be an i8 tensor, got tensor<?x5x8xi32>

// -----

func.func @compare_kind(%x: tensor<?x4xi32>) {
  %c = dghw.compare %x {kind = "gte", value = 1 : i64} : tensor<?x4xi32> -> tensor<?x4xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: compare kind must be one of gt, ge, lt, le, eq, ne, got 'gte'

// -----

func.func @compare_value(%x: tensor<?x4xi32>) {
  %c = dghw.compare %x {kind = "gt", value = -2147483649 : i64} : tensor<?x4xi32> -> tensor<?x4xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: compare threshold -2147483649 does not fit i32

// -----

func.func @matmul_leading_axes(%q: tensor<?x2x5x4xi8>, %k: tensor<?x3x4x5xi8>) {
  %s = dghw.matmul %q, %k {lhs_zp = 0 : i32, rhs_zp = 0 : i32} : (tensor<?x2x5x4xi8>, tensor<?x3x4x5xi8>) -> tensor<?x2x5x5xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: rhs leading axes has shape [?x3], expected [?x2]

// -----

func.func @norm_bias_range(%x: tensor<?x2xi8>) {
  %n = dghw.norm %x {kind = "rms", input_zp = 0 : i32, output_zp = 0 : i32, eps = 1 : i64, multiplier = array<i32: 1, 1>, bias = array<i64: 0, 2305843009213693953>, shift = 40 : i32} : tensor<?x2xi8> -> tensor<?x2xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: bias entries must lie in [-2^61, 2^61]

// -----

func.func @norm_eps(%x: tensor<?x2xi8>) {
  %n = dghw.norm %x {kind = "rms", input_zp = 0 : i32, output_zp = 0 : i32, eps = 0 : i64, multiplier = array<i32: 1, 1>, bias = array<i64: 0, 0>, shift = 40 : i32} : tensor<?x2xi8> -> tensor<?x2xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: eps must lie in [1, 2^61]

// -----

func.func @norm_shift(%x: tensor<?x2xi8>) {
  %n = dghw.norm %x {kind = "layer", input_zp = 0 : i32, output_zp = 0 : i32, eps = 1 : i64, multiplier = array<i32: 1, 1>, bias = array<i64: 0, 0>, shift = 63 : i32} : tensor<?x2xi8> -> tensor<?x2xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: shift must lie in [2, 62]

// -----

func.func @norm_multiplier_length(%x: tensor<?x3x2xi8>) {
  %n = dghw.norm %x {kind = "layer", input_zp = 0 : i32, output_zp = 0 : i32, eps = 1 : i64, multiplier = array<i32: 1>, bias = array<i64: 0, 0>, shift = 40 : i32} : tensor<?x3x2xi8> -> tensor<?x3x2xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: 'multiplier' must have 2 elements, got 1

// -----

func.func @norm_dynamic_axis(%x: tensor<?x?xi8>) {
  %n = dghw.norm %x {kind = "layer", input_zp = 0 : i32, output_zp = 0 : i32, eps = 1 : i64, multiplier = array<i32: 1>, bias = array<i64: 0>, shift = 40 : i32} : tensor<?x?xi8> -> tensor<?x?xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dghw.norm normalizes a last axis of ? elements; it must be static and at most 4096
