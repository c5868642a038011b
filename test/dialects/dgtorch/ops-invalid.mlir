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

// -----

func.func @pool_rank(%x: tensor<?x4x4xf32>) {
  %m = dgtorch.max_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, ceil_mode = false} : tensor<?x4x4xf32> -> tensor<?x2x2xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: input and result must be rank 4 (NCHW)

// -----

// torch rejects padding above half the (dilated) window.
func.func @pool_padding(%x: tensor<?x2x4x4xf32>) {
  %m = dgtorch.max_pool2d %x {kernel = array<i64: 3, 2>, stride = array<i64: 1, 1>, padding = array<i64: 2, 1>, dilation = array<i64: 1, 1>, ceil_mode = false} : tensor<?x2x4x4xf32> -> tensor<?x2x6x5xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: padding [2, 1] must be at most half the window [3, 2] (torch)

// -----

func.func @pool_dilation(%x: tensor<?x2x4x4xf32>) {
  %m = dgtorch.max_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 0, 1>, ceil_mode = false} : tensor<?x2x4x4xf32> -> tensor<?x2x3x3xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: 'dilation' entries must be >= 1, got [0, 1]

// -----

// Floor mode: (5 - 2) / 2 + 1 = 2 windows; 3 is the ceil-mode count.
func.func @pool_floor(%x: tensor<?x2x5x5xf32>) {
  %m = dgtorch.max_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, ceil_mode = false} : tensor<?x2x5x5xf32> -> tensor<?x2x3x2xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result has 3 windows along spatial axis 0, expected 2

// -----

// Ceil mode drops a last window that would start in the trailing padding: 3, not 4.
func.func @pool_ceil(%x: tensor<?x2x5x5xf32>) {
  %a = dgtorch.avg_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, ceil_mode = true, count_include_pad = true} : tensor<?x2x5x5xf32> -> tensor<?x2x3x4xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result has 4 windows along spatial axis 1, expected 3

// -----

// The dilated window 2 * (2 - 1) + 1 = 3 exceeds the input.
func.func @pool_window(%x: tensor<?x2x2x2xf32>) {
  %m = dgtorch.max_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 2, 2>, ceil_mode = false} : tensor<?x2x2x2xf32> -> tensor<?x2x1x1xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: window of extent 3 exceeds the padded input extent 2

// -----

func.func @pool_channels(%x: tensor<?x2x4x4xf32>) {
  %m = dgtorch.max_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, ceil_mode = false} : tensor<?x2x4x4xf32> -> tensor<?x3x2x2xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result batch and channel axes has shape [?x3], expected [?x2]

// -----

func.func @avg_pool_divisor(%x: tensor<?x2x4x4xf32>) {
  %a = dgtorch.avg_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, ceil_mode = false, count_include_pad = true, divisor_override = 0 : i64} : tensor<?x2x4x4xf32> -> tensor<?x2x2x2xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: divisor_override must be >= 1, got 0

// -----

func.func @adaptive_rank(%x: tensor<?x4x4xf32>) {
  %a = dgtorch.adaptive_avg_pool2d %x {output_size = array<i64: 1, 1>} : tensor<?x4x4xf32> -> tensor<?x1x1xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: input must be rank 4 (NCHW)

// -----

func.func @adaptive_result(%x: tensor<?x2x4x4xf32>) {
  %a = dgtorch.adaptive_avg_pool2d %x {output_size = array<i64: 2, 1>} : tensor<?x2x4x4xf32> -> tensor<?x2x1x1xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result has shape [?x2x1x1], expected [?x2x2x1]

// -----

func.func @softmax_dim(%x: tensor<?x10xf32>) {
  %s = dgtorch.softmax %x {dim = -3 : i64} : tensor<?x10xf32> -> tensor<?x10xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: 'dim' -3 is out of range for rank 2

// -----

func.func @pad_pairs(%x: tensor<?x2x4x4xf32>) {
  %p = dgtorch.pad %x {pad = array<i64: 1, 1, 1>, value = 0.0 : f64} : tensor<?x2x4x4xf32> -> tensor<?x2x4x6xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: 'pad' must hold (before, after) pairs for at most 4 axes, got 3 entries

// -----

// Pairs for the batch axis come last.
func.func @pad_batch(%x: tensor<2x2x4x4xf32>) {
  %p = dgtorch.pad %x {pad = array<i64: 0, 0, 0, 0, 0, 0, 1, 0>, value = 0.0 : f64} : tensor<2x2x4x4xf32> -> tensor<3x2x4x4xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dgtorch.pad cannot change the batch-axis extent (2 -> 3)

// -----

// [left, right, top, bottom]: W grows by 3, H by 1.
func.func @pad_result(%x: tensor<?x2x4x4xf32>) {
  %p = dgtorch.pad %x {pad = array<i64: 1, 2, 0, 1>, value = 0.0 : f64} : tensor<?x2x4x4xf32> -> tensor<?x2x7x5xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result has shape [?x2x7x5], expected [?x2x5x7]

// -----

func.func @cat_batch(%x: tensor<?x2x4x4xf32>) {
  %c = dgtorch.cat %x, %x {dim = 0 : i64} : (tensor<?x2x4x4xf32>, tensor<?x2x4x4xf32>) -> tensor<?x2x4x4xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dgtorch.cat cannot operate along the batch axis (axis 0)

// -----

func.func @cat_dim(%x: tensor<?x2x4x4xf32>) {
  %c = dgtorch.cat %x, %x {dim = 4 : i64} : (tensor<?x2x4x4xf32>, tensor<?x2x4x4xf32>) -> tensor<?x2x4x8xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: 'dim' 4 is out of range for rank 4

// -----

func.func @cat_none() {
  %c = dgtorch.cat {dim = 1 : i64} : () -> tensor<?x2xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dgtorch.cat needs at least one input

// -----

func.func @cat_rank(%x: tensor<?x2x4x4xf32>, %y: tensor<?x2x4xf32>) {
  %c = dgtorch.cat %x, %y {dim = 1 : i64} : (tensor<?x2x4x4xf32>, tensor<?x2x4xf32>) -> tensor<?x4x4x4xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: input #1 has rank 3 but the result has rank 4

// -----

func.func @cat_extent(%x: tensor<?x2x4x4xf32>, %y: tensor<?x2x4x3xf32>) {
  %c = dgtorch.cat %x, %y {dim = 1 : i64} : (tensor<?x2x4x4xf32>, tensor<?x2x4x3xf32>) -> tensor<?x4x4x4xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: input #1 without axis 1 has shape [?x4x3], expected [?x4x4]

// -----

func.func @cat_sum(%x: tensor<?x2x4x4xf32>) {
  %c = dgtorch.cat %x, %x {dim = -3 : i64} : (tensor<?x2x4x4xf32>, tensor<?x2x4x4xf32>) -> tensor<?x5x4x4xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result axis 1 has shape [5], expected [4]

// -----

func.func @upsample_mode(%x: tensor<?x2x4x4xf32>) {
  %u = dgtorch.upsample_nearest2d %x {mode = "bilinear"} : tensor<?x2x4x4xf32> -> tensor<?x2x8x8xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: mode must be one of nearest, nearest-exact, got 'bilinear'

// -----

func.func @upsample_rank(%x: tensor<?x4x4xf32>) {
  %u = dgtorch.upsample_nearest2d %x {mode = "nearest"} : tensor<?x4x4xf32> -> tensor<?x8x8xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: input and result must be rank 4

// -----

func.func @upsample_channels(%x: tensor<?x2x4x4xf32>) {
  %u = dgtorch.upsample_nearest2d %x {mode = "nearest"} : tensor<?x2x4x4xf32> -> tensor<?x3x8x8xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result non-spatial axes has shape [?x3], expected [?x2]

// -----

func.func @upsample_dynamic(%x: tensor<?x2x4x4xf32>) {
  %u = dgtorch.upsample_nearest2d %x {mode = "nearest"} : tensor<?x2x4x4xf32> -> tensor<?x2x?x8xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: the resized extents must be static

// -----

func.func @batch_norm_rank(%x: tensor<?xf32>, %p: tensor<2xf32>) {
  %n = dgtorch.batch_norm %x, %p, %p, %p, %p {eps = 1.0e-05 : f64} : (tensor<?xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: input must have a channel axis 1 (rank >= 2)

// -----

func.func @batch_norm_param(%x: tensor<?x2x4x4xf32>, %p: tensor<2xf32>, %v: tensor<3xf32>) {
  %n = dgtorch.batch_norm %x, %p, %p, %p, %v {eps = 1.0e-05 : f64} : (tensor<?x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<3xf32>) -> tensor<?x2x4x4xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: running_var has shape [3], expected [2]

// -----

func.func @batch_norm_eps(%x: tensor<?x2x4x4xf32>, %p: tensor<2xf32>) {
  %n = dgtorch.batch_norm %x, %p, %p, %p, %p {eps = -1.0e-05 : f64} : (tensor<?x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2x4x4xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: eps must be >= 0, got -1e-05

// -----

func.func @batch_norm_result(%x: tensor<?x2x4x4xf32>, %p: tensor<2xf32>) {
  %n = dgtorch.batch_norm %x, %p, %p, %p, %p {eps = 1.0e-05 : f64} : (tensor<?x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2x4x2xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result has shape [?x2x4x2], expected [?x2x4x4]

// -----

func.func @permute_dims(%x: tensor<?x2x3xf32>) {
  %t = dgtorch.permute %x {dims = array<i64: 0, 1, -2>} : tensor<?x2x3xf32> -> tensor<?x3x2xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dims [0, 1, 1] is not a permutation of the 3 axes

// -----

func.func @permute_batch(%x: tensor<2x2x3xf32>) {
  %t = dgtorch.permute %x {dims = array<i64: 1, 0, 2>} : tensor<2x2x3xf32> -> tensor<2x2x3xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: permute cannot move the batch axis

// -----

func.func @permute_result(%x: tensor<?x2x4x4xf32>) {
  %t = dgtorch.permute %x {dims = array<i64: 0, 2, 3, 1>} : tensor<?x2x4x4xf32> -> tensor<?x2x4x4xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result has shape [?x2x4x4], expected [?x4x4x2]

// -----

// A dynamic batch stays dynamic.
func.func @cat_batch_extent(%x: tensor<?x2x4x4xf32>) {
  %c = dgtorch.cat %x, %x {dim = 1 : i64} : (tensor<?x2x4x4xf32>, tensor<?x2x4x4xf32>) -> tensor<2x4x4x4xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dgtorch.cat cannot change the batch-axis extent (? -> 2)

// -----

func.func @upsample_batch(%x: tensor<?x2x4x4xf32>) {
  %u = dgtorch.upsample_nearest2d %x {mode = "nearest"} : tensor<?x2x4x4xf32> -> tensor<1x2x8x8xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dgtorch.upsample_nearest2d cannot change the batch-axis extent (? -> 1)

// -----

func.func @slice_backwards(%x: tensor<?x5x8xf32>) {
  %s = dgtorch.slice %x {dim = 1 : i64, start = 4 : i64, end = 2 : i64, step = 1 : i64} : tensor<?x5x8xf32> -> tensor<?x0x8xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: slice needs 0 <= start <= end, got start 4, end 2

// -----

func.func @transpose_shape(%x: tensor<?x5x8xf32>) {
  %t = dgtorch.transpose %x {dim0 = 1 : i64, dim1 = 2 : i64} : tensor<?x5x8xf32> -> tensor<?x5x8xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result has shape [?x5x8], expected [?x8x5]

// -----

// Logic layers take int32 tensors, never floats.
func.func @bitwise_float(%x: tensor<?x3xf32>) {
  %b = dgtorch.bitwise %x {kind = "and", value = 1 : i64} : tensor<?x3xf32> -> tensor<?x3xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: input must be an i8 or i32 tensor (a logic-layer tensor), got tensor<?x3xf32>

// -----

func.func @bitwise_tensor_float(%x: tensor<?x3xi32>, %y: tensor<?x3xf32>) {
  %b = dgtorch.bitwise_tensor %x, %y {kind = "and"} : (tensor<?x3xi32>, tensor<?x3xf32>) -> tensor<?x3xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: rhs must be an i8 or i32 tensor (a logic-layer tensor), got tensor<?x3xf32>

// -----

func.func @bitwise_tensor_kind(%x: tensor<?x3xi32>) {
  %b = dgtorch.bitwise_tensor %x, %x {kind = "nand"} : (tensor<?x3xi32>, tensor<?x3xi32>) -> tensor<?x3xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: bitwise kind must be one of and, or, xor, got 'nand'

// -----

// dg does not broadcast the operands of a logic op, as torch would: [?x1] against [?x3].
func.func @compare_tensor_broadcast(%x: tensor<?x3xi32>, %y: tensor<?x1xi32>) {
  %c = dgtorch.compare_tensor %x, %y {kind = "gt"} : (tensor<?x3xi32>, tensor<?x1xi32>) -> tensor<?x3xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: operands must have the same shape (no broadcasting), got [?x3] and [?x1]

// -----

func.func @compare_tensor_kind(%x: tensor<?x3xi32>) {
  %c = dgtorch.compare_tensor %x, %x {kind = "gte"} : (tensor<?x3xi32>, tensor<?x3xi32>) -> tensor<?x3xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: compare kind must be one of gt, ge, lt, le, eq, ne, got 'gte'

// -----

func.func @repeat_batch(%x: tensor<?x3xi32>) {
  %r = dgtorch.repeat %x {repeats = array<i64: 2, 1>} : tensor<?x3xi32> -> tensor<?x3xi32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: cannot repeat along the batch axis (axis 0)

// -----

func.func @mul_enlarging_constant(%x: tensor<?x1x8xf32>, %c: tensor<5x8xf32>) {
  %m = dgtorch.mul %x, %c : (tensor<?x1x8xf32>, tensor<5x8xf32>) -> tensor<?x5x8xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: rhs of shape [5x8] does not broadcast to [?x1x8]

// -----

func.func @matmul_rank(%a: tensor<?x8xf32>, %b: tensor<?x8xf32>) {
  %m = dgtorch.matmul %a, %b : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: matmul operands must both have rank 3 or 4 (feature rank 2-3), got [?x8] and [?x8]

// -----

func.func @matmul_contraction(%a: tensor<?x5x8xf32>, %b: tensor<?x4x5xf32>) {
  %m = dgtorch.matmul %a, %b : (tensor<?x5x8xf32>, tensor<?x4x5xf32>) -> tensor<?x5x5xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: matmul contraction extents differ: lhs [?x5x8], rhs [?x4x5]

// -----

func.func @norm_kind(%x: tensor<?x5x4xf32>, %w: tensor<4xf32>) {
  %r = dgtorch.norm %x, %w {kind = "batch", eps = 1.0e-05 : f64} : (tensor<?x5x4xf32>, tensor<4xf32>) -> tensor<?x5x4xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: kind must be one of layer, rms, got 'batch'

// -----

func.func @norm_rank(%x: tensor<?x2x5x4xf32>, %w: tensor<4xf32>) {
  %r = dgtorch.norm %x, %w {kind = "rms", eps = 1.0e-05 : f64} : (tensor<?x2x5x4xf32>, tensor<4xf32>) -> tensor<?x2x5x4xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dgtorch.norm supports feature rank 1 or 2 (rank without the batch axis), got rank 4 (feature rank 3)

// -----

func.func @norm_too_long(%x: tensor<?x5000xf32>, %w: tensor<5000xf32>) {
  %r = dgtorch.norm %x, %w {kind = "rms", eps = 1.0e-05 : f64} : (tensor<?x5000xf32>, tensor<5000xf32>) -> tensor<?x5000xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dgtorch.norm normalizes a last axis of 5000 elements; it must be static and at most 4096

// -----

func.func @norm_eps(%x: tensor<?x5x4xf32>, %w: tensor<4xf32>) {
  %r = dgtorch.norm %x, %w {kind = "rms", eps = 0.0 : f64} : (tensor<?x5x4xf32>, tensor<4xf32>) -> tensor<?x5x4xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: eps must be > 0, got 0.0

// -----

func.func @norm_rms_with_bias(%x: tensor<?x5x4xf32>, %w: tensor<4xf32>) {
  %r = dgtorch.norm %x, %w, %w {kind = "rms", eps = 1.0e-05 : f64} : (tensor<?x5x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x5x4xf32>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: a layer norm has a bias operand and an rms norm none
