// Every verifier error of dgtorch (and of the shared helpers in dialects/common.py).
// Each chunk holds one faulty op; its message is the first line xdsl-opt prints for the chunk.
// RUN: dg-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @constant_type() {
  %c = dgtorch.constant {value = dense<1> : tensor<2xi8>} : tensor<3xi8>
  func.return
}
// CHECK: value type tensor<2xi8> does not match result type tensor<3xi8>

// -----

func.func @quantize_float_input(%x: tensor<?x4xi32>) {
  %q = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xi32> -> tensor<?x4xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: input must be a float tensor, got tensor<?x4xi32>

// -----

func.func @quantize_integer_result(%x: tensor<?x4xf32>) {
  %q = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xf32> -> tensor<?x4xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result must be an integer tensor, got tensor<?x4xf32>

// -----

func.func @quantize_shape(%x: tensor<?x4xf32>) {
  %q = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xf32> -> tensor<?x5xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result has shape [?x5], expected [?x4]

// -----

func.func @quant_range(%x: tensor<?x4xi8>) {
  %d = dgtorch.dequantize_per_tensor %x {scale = 0.5 : f64, zero_point = 0 : i64, quant_min = 5 : i64, quant_max = 5 : i64} : tensor<?x4xi8> -> tensor<?x4xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: quant_min (5) must be below quant_max (5)

// -----

func.func @scale(%x: tensor<?x4xi8>) {
  %d = dgtorch.dequantize_per_tensor %x {scale = 0.0 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xi8> -> tensor<?x4xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: scale must be positive, got 0.0

// -----

func.func @zero_point(%x: tensor<?x4xi8>) {
  %d = dgtorch.dequantize_per_tensor %x {scale = 0.5 : f64, zero_point = 128 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xi8> -> tensor<?x4xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: zero_point 128 lies outside [quant_min, quant_max]

// -----

func.func @axis(%w: tensor<4x3xf32>) {
  %q = dgtorch.quantize_per_channel %w {scales = array<f64: 0.5, 0.5, 0.5>, zero_points = array<i64: 0, 0, 0>, axis = 2 : i64, quant_min = -127 : i64, quant_max = 127 : i64} : tensor<4x3xf32> -> tensor<4x3xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: axis 2 is out of range for rank 2

// -----

func.func @scale_count(%w: tensor<4x3xf32>) {
  %q = dgtorch.quantize_per_channel %w {scales = array<f64: 0.5, 0.5, 0.5>, zero_points = array<i64: 0, 0, 0>, axis = 0 : i64, quant_min = -127 : i64, quant_max = 127 : i64} : tensor<4x3xf32> -> tensor<4x3xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: expected 4 scales and zero points along axis 0, got 3 and 3

// -----

func.func @channel_scales(%w: tensor<3x4xi8>) {
  %d = dgtorch.dequantize_per_channel %w {scales = array<f64: 0.5, -0.5, 0.5>, zero_points = array<i64: 0, 0, 0>, axis = 0 : i64, quant_min = -127 : i64, quant_max = 127 : i64} : tensor<3x4xi8> -> tensor<3x4xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: scales must be positive

// -----

func.func @channel_float_result(%w: tensor<3x4xi8>) {
  %d = dgtorch.dequantize_per_channel %w {scales = array<f64: 0.5, 0.5, 0.5>, zero_points = array<i64: 0, 0, 0>, axis = 0 : i64, quant_min = -127 : i64, quant_max = 127 : i64} : tensor<3x4xi8> -> tensor<3x4xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result must be a float tensor, got tensor<3x4xi8>

// -----

func.func @conv_stride_length(%x: tensor<?x1x8x8xf32>, %w: tensor<4x1x3x3xf32>) {
  %c = dgtorch.conv2d %x, %w {stride = array<i64: 1, 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<?x1x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<?x4x6x6xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: 'stride' must have 2 elements, got 3

// -----

func.func @conv_stride(%x: tensor<?x1x8x8xf32>, %w: tensor<4x1x3x3xf32>) {
  %c = dgtorch.conv2d %x, %w {stride = array<i64: 0, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<?x1x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<?x4x6x6xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: 'stride' entries must be >= 1, got [0, 1]

// -----

func.func @conv_padding(%x: tensor<?x1x8x8xf32>, %w: tensor<4x1x3x3xf32>) {
  %c = dgtorch.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: -1, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<?x1x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<?x4x6x6xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: 'padding' entries must be >= 0, got [-1, 0]

// -----

func.func @conv_rank(%x: tensor<?x8x8xf32>, %w: tensor<4x1x3x3xf32>) {
  %c = dgtorch.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<?x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<?x4x6x6xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: input and weight must be rank 4 (NCHW, OIHW)

// -----

func.func @conv_groups(%x: tensor<?x3x8x8xf32>, %w: tensor<4x1x3x3xf32>) {
  %c = dgtorch.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 2 : i64} : (tensor<?x3x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<?x4x6x6xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: groups=2 is inconsistent with 3 input and 4 output channels

// -----

func.func @conv_bias(%x: tensor<?x1x8x8xf32>, %w: tensor<4x1x3x3xf32>, %b: tensor<5xf32>) {
  %c = dgtorch.conv2d %x, %w, %b {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<?x1x8x8xf32>, tensor<4x1x3x3xf32>, tensor<5xf32>) -> tensor<?x4x6x6xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: bias has shape [5], expected [4]

// -----

// Dilation 2 makes the 3x3 kernel span 5 input pixels: 8 - 5 + 1 = 4.
func.func @conv_result(%x: tensor<?x1x8x8xf32>, %w: tensor<4x1x3x3xf32>) {
  %c = dgtorch.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 2, 2>, groups = 1 : i64} : (tensor<?x1x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<?x4x6x6xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result has shape [?x4x6x6], expected [?x4x4x4]

// -----

func.func @linear_rank(%x: tensor<?x16xf32>, %w: tensor<16xf32>) {
  %y = dgtorch.linear %x, %w : (tensor<?x16xf32>, tensor<16xf32>) -> tensor<?x10xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: weight must be rank 2 and input at least rank 1

// -----

func.func @linear_features(%x: tensor<?x15xf32>, %w: tensor<10x16xf32>) {
  %y = dgtorch.linear %x, %w : (tensor<?x15xf32>, tensor<10x16xf32>) -> tensor<?x10xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: input feature axis has shape [15], expected [16]

// -----

func.func @relu_shape(%x: tensor<?x4xf32>) {
  %r = dgtorch.relu %x : tensor<?x4xf32> -> tensor<?x5xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result has shape [?x5], expected [?x4]

// -----

func.func @add_shape(%a: tensor<?x4xf32>, %b: tensor<?x3xf32>) {
  %s = dgtorch.add %a, %b : (tensor<?x4xf32>, tensor<?x3xf32>) -> tensor<?x4xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: rhs has shape [?x3], expected [?x4]

// -----

func.func @reshape_element_type(%x: tensor<?x4xf32>) {
  %r = dgtorch.reshape %x : tensor<?x4xf32> -> tensor<?x4xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: input and result element types differ

// -----

func.func @reshape_rank_0(%x: tensor<f32>) {
  %r = dgtorch.reshape %x : tensor<f32> -> tensor<1xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dgtorch.reshape: operands must have a batch axis (rank >= 1)

// -----

func.func @reshape_batch(%x: tensor<2x4xf32>) {
  %r = dgtorch.reshape %x : tensor<2x4xf32> -> tensor<4x2xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dgtorch.reshape cannot change the batch-axis extent (2 -> 4)

// -----

// A dynamic batch axis must stay dynamic: the device vectorizes over it.
func.func @reshape_dynamic_batch(%x: tensor<?x4xf32>) {
  %r = dgtorch.reshape %x : tensor<?x4xf32> -> tensor<1x4xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dgtorch.reshape cannot change the batch-axis extent (? -> 1)

// -----

func.func @reshape_count(%x: tensor<?x4x2xf32>) {
  %r = dgtorch.reshape %x : tensor<?x4x2xf32> -> tensor<?x7xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: element count per batch item changes (8 -> 7)

// -----

func.func @flatten_order(%x: tensor<?x2x3x4xf32>) {
  %f = dgtorch.flatten %x {start_dim = 2 : i64, end_dim = 1 : i64} : tensor<?x2x3x4xf32> -> tensor<?x24xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: start_dim 2 is after end_dim 1

// -----

func.func @flatten_rank(%x: tensor<?x2x3x4xf32>) {
  %f = dgtorch.flatten %x {start_dim = 1 : i64, end_dim = 2 : i64} : tensor<?x2x3x4xf32> -> tensor<?x24xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result rank must be 3, got 2
