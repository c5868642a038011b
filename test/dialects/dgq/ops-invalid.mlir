// Every verifier error of dgq, and every parse and verify error of the !dgq.uniform type.
// Each chunk holds one fault; its message is the first line xdsl-opt prints for the chunk,
// after the `file:line:col` of a parse error (type errors are reported while parsing).
// RUN: dg-opt %s --split-input-file --parsing-diagnostics --verify-diagnostics | filecheck %s

func.func @storage_type(%a: tensor<4x!dgq.uniform<f32:f32, 0.5>>) {
  func.return
}
// CHECK:      ops-invalid.mlir:[[# @LINE - 3]]:{{[0-9]+}}
// CHECK:      storage type must be an integer type

// -----

func.func @expressed_type(%a: tensor<4x!dgq.uniform<i8:i32, 0.5>>) {
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: ops-invalid.mlir:[[# @LINE - 4]]:{{[0-9]+}}
// CHECK:      expressed type must be a float type

// -----

func.func @storage_range(%a: tensor<4x!dgq.uniform<i8<-127:128>:f32, 0.5>>) {
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: ops-invalid.mlir:[[# @LINE - 4]]:{{[0-9]+}}
// CHECK:      storage range [-127, 128] does not fit in i8

// -----

func.func @no_scales(%a: tensor<4x!dgq.uniform<i8:f32:0, {}>>) {
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: ops-invalid.mlir:[[# @LINE - 4]]:{{[0-9]+}}
// CHECK:      expected at least one scale

// -----

func.func @type_scale(%a: tensor<4x!dgq.uniform<i8:f32, 0.0:1>>) {
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: ops-invalid.mlir:[[# @LINE - 4]]:{{[0-9]+}}
// CHECK:      scales must be positive

// -----

func.func @type_zero_point(%a: tensor<4x!dgq.uniform<i8<-127:127>:f32:0, {0.5, 0.25:-128}>>) {
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: ops-invalid.mlir:[[# @LINE - 4]]:{{[0-9]+}}
// CHECK:      zero points must lie in the storage range [-127, 127]

// -----

func.func @constant_storage() {
  %c = dgq.constant {value = dense<1> : tensor<4xi32>} : tensor<4x!dgq.uniform<i8:f32, 0.5>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: value element type i32 is not the storage type i8

// -----

func.func @constant_shape() {
  %c = dgq.constant {value = dense<1> : tensor<3xi8>} : tensor<4x!dgq.uniform<i8:f32, 0.5>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: value has shape [3], expected [4]

// -----

func.func @constant_range() {
  %c = dgq.constant {value = dense<[0, -128]> : tensor<2xi8>} : tensor<2x!dgq.uniform<i8<-127:127>:f32, 0.5>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: stored values exceed the storage range [-127, 127]

// -----

func.func @constant_axis() {
  %c = dgq.constant {value = dense<1> : tensor<2xi8>} : tensor<2x!dgq.uniform<i8:f32:1, {0.5, 0.25}>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result: quantization axis 1 is out of range

// -----

func.func @constant_axis_extent() {
  %c = dgq.constant {value = dense<1> : tensor<3xi8>} : tensor<3x!dgq.uniform<i8:f32:0, {0.5, 0.25}>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result: 2 scales for an axis of extent 3

// -----

func.func @quantize_input(%x: tensor<?x4xi8>) {
  %q = dgq.quantize %x : tensor<?x4xi8> -> tensor<?x4x!dgq.uniform<i8:f32, 0.5>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: input must be a float tensor

// -----

func.func @quantize_result(%x: tensor<?x4xf32>) {
  %q = dgq.quantize %x : tensor<?x4xf32> -> tensor<?x4xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result must be a quantized tensor, got tensor<?x4xi8>

// -----

// Graph inputs are quantized per tensor.
func.func @quantize_per_axis(%x: tensor<?x2xf32>) {
  %q = dgq.quantize %x : tensor<?x2xf32> -> tensor<?x2x!dgq.uniform<i8:f32:1, {0.5, 0.25}>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result must be quantized per tensor

// -----

func.func @dequantize_result(%x: tensor<?x4x!dgq.uniform<i8:f32, 0.5>>) {
  %d = dgq.dequantize %x : tensor<?x4x!dgq.uniform<i8:f32, 0.5>> -> tensor<?x4xi8>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result must be a float tensor

// -----

func.func @requantize_input(%x: tensor<?x4xi8>) {
  %r = dgq.requantize %x : tensor<?x4xi8> -> tensor<?x4x!dgq.uniform<i8:f32, 0.5>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: input must be a quantized tensor, got tensor<?x4xi8>

// -----

func.func @weight_axis(%x: tensor<?x8x!dgq.uniform<i8:f32, 0.5>>, %w: tensor<2x8x!dgq.uniform<i8:f32:1, {0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5}>>) {
  %y = dgq.linear %x, %w : (tensor<?x8x!dgq.uniform<i8:f32, 0.5>>, tensor<2x8x!dgq.uniform<i8:f32:1, {0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5}>>) -> tensor<?x2x!dgq.uniform<i8:f32, 0.5>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: weight must be quantized along its output-channel axis 0

// -----

func.func @weight_symmetric(%x: tensor<?x8x!dgq.uniform<i8:f32, 0.5>>, %w: tensor<2x8x!dgq.uniform<i8:f32:0, {0.5, 0.5:1}>>) {
  %y = dgq.linear %x, %w : (tensor<?x8x!dgq.uniform<i8:f32, 0.5>>, tensor<2x8x!dgq.uniform<i8:f32:0, {0.5, 0.5:1}>>) -> tensor<?x2x!dgq.uniform<i8:f32, 0.5>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: weight must be quantized symmetrically (zero points 0)

// -----

func.func @bias_storage(%x: tensor<?x8x!dgq.uniform<i8:f32, 0.5>>, %w: tensor<2x8x!dgq.uniform<i8:f32, 0.5>>, %b: tensor<2x!dgq.uniform<i8:f32, 0.25>>) {
  %y = dgq.linear %x, %w, %b : (tensor<?x8x!dgq.uniform<i8:f32, 0.5>>, tensor<2x8x!dgq.uniform<i8:f32, 0.5>>, tensor<2x!dgq.uniform<i8:f32, 0.25>>) -> tensor<?x2x!dgq.uniform<i8:f32, 0.5>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: bias must be i32 with zero points 0

// -----

func.func @bias_scale_count(%x: tensor<?x8x!dgq.uniform<i8:f32, 0.5>>, %w: tensor<2x8x!dgq.uniform<i8:f32:0, {0.5, 0.25}>>, %b: tensor<2x!dgq.uniform<i32:f32, 0.25>>) {
  %y = dgq.linear %x, %w, %b : (tensor<?x8x!dgq.uniform<i8:f32, 0.5>>, tensor<2x8x!dgq.uniform<i8:f32:0, {0.5, 0.25}>>, tensor<2x!dgq.uniform<i32:f32, 0.25>>) -> tensor<?x2x!dgq.uniform<i8:f32, 0.5>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: bias has 1 scales but the weight has 2

// -----

// The bias grid must be input scale * weight scale: 0.5 * 0.25 = 0.125.
func.func @bias_scale(%x: tensor<?x8x!dgq.uniform<i8:f32, 0.5>>, %w: tensor<2x8x!dgq.uniform<i8:f32:0, {0.5, 0.25}>>, %b: tensor<2x!dgq.uniform<i32:f32:0, {0.25, 0.2}>>) {
  %y = dgq.linear %x, %w, %b : (tensor<?x8x!dgq.uniform<i8:f32, 0.5>>, tensor<2x8x!dgq.uniform<i8:f32:0, {0.5, 0.25}>>, tensor<2x!dgq.uniform<i32:f32:0, {0.25, 0.2}>>) -> tensor<?x2x!dgq.uniform<i8:f32, 0.5>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: bias scale 0.2 must equal input scale * weight scale (0.125)

// -----

func.func @activation(%x: tensor<?x8x!dgq.uniform<i8:f32, 0.5>>, %w: tensor<2x8x!dgq.uniform<i8:f32, 0.5>>) {
  %y = dgq.linear %x, %w {fused_activation = "relu6"} : (tensor<?x8x!dgq.uniform<i8:f32, 0.5>>, tensor<2x8x!dgq.uniform<i8:f32, 0.5>>) -> tensor<?x2x!dgq.uniform<i8:f32, 0.5>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: fused_activation must be one of none, relu, got 'relu6'

// -----

func.func @linear_rank(%x: tensor<8x!dgq.uniform<i8:f32, 0.5>>, %w: tensor<2x8x!dgq.uniform<i8:f32, 0.5>>) {
  %y = dgq.linear %x, %w : (tensor<8x!dgq.uniform<i8:f32, 0.5>>, tensor<2x8x!dgq.uniform<i8:f32, 0.5>>) -> tensor<2x!dgq.uniform<i8:f32, 0.5>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: weight must be rank 2 and input at least rank 2

// -----

func.func @linear_result(%x: tensor<?x8x!dgq.uniform<i8:f32, 0.5>>, %w: tensor<2x8x!dgq.uniform<i8:f32, 0.5>>) {
  %y = dgq.linear %x, %w : (tensor<?x8x!dgq.uniform<i8:f32, 0.5>>, tensor<2x8x!dgq.uniform<i8:f32, 0.5>>) -> tensor<?x3x!dgq.uniform<i8:f32, 0.5>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result has shape [?x3], expected [?x2]

// -----

func.func @conv_rank(%x: tensor<?x4x4x!dgq.uniform<i8:f32, 0.5>>, %w: tensor<2x1x3x3x!dgq.uniform<i8:f32, 0.5>>) {
  %c = dgq.conv2d %x, %w {stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>} : (tensor<?x4x4x!dgq.uniform<i8:f32, 0.5>>, tensor<2x1x3x3x!dgq.uniform<i8:f32, 0.5>>) -> tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.5>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: input and weight must be rank 4 (NCHW, OIHW)

// -----

func.func @conv_pad_length(%x: tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.5>>, %w: tensor<2x1x3x3x!dgq.uniform<i8:f32, 0.5>>) {
  %c = dgq.conv2d %x, %w {stride = array<i64: 1, 1>, pad = array<i64: 0, 0>} : (tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.5>>, tensor<2x1x3x3x!dgq.uniform<i8:f32, 0.5>>) -> tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.5>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: 'pad' must have 4 elements, got 2

// -----

// Grouped convolution is neither dense nor depthwise (groups = 2 of 4 channels).
func.func @conv_groups(%x: tensor<?x4x4x4x!dgq.uniform<i8:f32, 0.5>>, %w: tensor<4x2x3x3x!dgq.uniform<i8:f32, 0.5>>) {
  %c = dgq.conv2d %x, %w {stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, groups = 2 : i64} : (tensor<?x4x4x4x!dgq.uniform<i8:f32, 0.5>>, tensor<4x2x3x3x!dgq.uniform<i8:f32, 0.5>>) -> tensor<?x4x2x2x!dgq.uniform<i8:f32, 0.5>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: only dense (groups = 1) or depthwise (groups = in_channels = out_channels) convolution is supported, got groups = 2 with 4 input and 4 output channels

// -----

func.func @conv_channels(%x: tensor<?x2x4x4x!dgq.uniform<i8:f32, 0.5>>, %w: tensor<2x1x3x3x!dgq.uniform<i8:f32, 0.5>>) {
  %c = dgq.conv2d %x, %w {stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>} : (tensor<?x2x4x4x!dgq.uniform<i8:f32, 0.5>>, tensor<2x1x3x3x!dgq.uniform<i8:f32, 0.5>>) -> tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.5>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: weight input-channel axis has shape [1], expected [2]

// -----

// Asymmetric padding: rows (4 + 1 + 0 - 3) / 2 + 1 = 2, columns 4 + 0 + 2 - 3 + 1 = 4.
func.func @conv_result(%x: tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.5>>, %w: tensor<2x1x3x3x!dgq.uniform<i8:f32, 0.5>>) {
  %c = dgq.conv2d %x, %w {stride = array<i64: 2, 1>, pad = array<i64: 1, 0, 0, 2>} : (tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.5>>, tensor<2x1x3x3x!dgq.uniform<i8:f32, 0.5>>) -> tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.5>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result has shape [?x2x2x2], expected [?x2x2x4]

// -----

func.func @add_per_axis(%a: tensor<?x2x!dgq.uniform<i8:f32, 0.5>>, %b: tensor<?x2x!dgq.uniform<i8:f32:1, {0.5, 0.25}>>) {
  %s = dgq.add %a, %b : (tensor<?x2x!dgq.uniform<i8:f32, 0.5>>, tensor<?x2x!dgq.uniform<i8:f32:1, {0.5, 0.25}>>) -> tensor<?x2x!dgq.uniform<i8:f32, 0.5>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: rhs must be quantized per tensor

// -----

func.func @add_activation(%a: tensor<?x2x!dgq.uniform<i8:f32, 0.5>>, %b: tensor<?x2x!dgq.uniform<i8:f32, 0.5>>) {
  %s = dgq.add %a, %b {fused_activation = "sigmoid"} : (tensor<?x2x!dgq.uniform<i8:f32, 0.5>>, tensor<?x2x!dgq.uniform<i8:f32, 0.5>>) -> tensor<?x2x!dgq.uniform<i8:f32, 0.5>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: fused_activation must be one of none, relu, got 'sigmoid'

// -----

func.func @reshape_grid(%x: tensor<?x2x4x!dgq.uniform<i8:f32, 0.5:1>>) {
  %r = dgq.reshape %x : tensor<?x2x4x!dgq.uniform<i8:f32, 0.5:1>> -> tensor<?x8x!dgq.uniform<i8:f32, 0.5:2>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dgq.reshape must keep the quantization grid: result is !dgq.uniform<i8:f32, 0.5:2>, input is !dgq.uniform<i8:f32, 0.5:1>

// -----

func.func @reshape_count(%x: tensor<?x2x4x!dgq.uniform<i8:f32, 0.5>>) {
  %r = dgq.reshape %x : tensor<?x2x4x!dgq.uniform<i8:f32, 0.5>> -> tensor<?x6x!dgq.uniform<i8:f32, 0.5>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: element count per batch item changes (8 -> 6)

// -----

func.func @reshape_batch(%x: tensor<?x2x4x!dgq.uniform<i8:f32, 0.5>>) {
  %r = dgq.reshape %x : tensor<?x2x4x!dgq.uniform<i8:f32, 0.5>> -> tensor<2x?x4x!dgq.uniform<i8:f32, 0.5>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dgq.reshape cannot change the batch-axis extent (? -> 2)

// -----

// Depthwise needs the weight [C, 1, kh, kw].
func.func @depthwise_weight(%x: tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>, %w: tensor<2x2x3x3x!dgq.uniform<i8<-127:127>:f32, 0.25>>) {
  %c = dgq.conv2d %x, %w {stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, groups = 2 : i64} : (tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>, tensor<2x2x3x3x!dgq.uniform<i8<-127:127>:f32, 0.25>>) -> tensor<?x2x3x3x!dgq.uniform<i8:f32, 0.5:-3>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: weight input-channel axis has shape [2], expected [1]

// -----

func.func @max_pool_pad(%x: tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %p = dgq.max_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 1, 0, 1>} : tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x2x3x3x!dgq.uniform<i8:f32, 0.5:-3>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: max_pool2d does not support padding

// -----

func.func @pool_rank(%x: tensor<?x5x5x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %p = dgq.max_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>} : tensor<?x5x5x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x2x2x!dgq.uniform<i8:f32, 0.5:-3>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: input and result must be rank 4 (NCHW)

// -----

func.func @pool_grid(%x: tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %p = dgq.max_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>} : tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.5:-2>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dgq.max_pool2d must keep the quantization grid: result is !dgq.uniform<i8:f32, 0.5:-2>, input is !dgq.uniform<i8:f32, 0.5:-3>

// -----

// Neither the floor (2) nor the ceil (3) window count.
func.func @pool_windows(%x: tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %p = dgq.max_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>} : tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x2x2x4x!dgq.uniform<i8:f32, 0.5:-3>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result has 4 windows along spatial axis 1, expected 2 or 3

// -----

func.func @pool_channels(%x: tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %p = dgq.max_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>} : tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x3x2x2x!dgq.uniform<i8:f32, 0.5:-3>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result batch and channel axes has shape [?x3], expected [?x2]

// -----

func.func @pool_kernel(%x: tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %p = dgq.max_pool2d %x {kernel = array<i64: 2, 0>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>} : tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.5:-3>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: 'kernel' entries must be >= 1, got [2, 0]

// -----

// Without count_include_pad, a window of padding only would divide by 0.
func.func @avg_pool_overlap(%x: tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %p = dgq.avg_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 2, 0>, count_include_pad = false} : tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x2x2x3x!dgq.uniform<i8:f32, 0.5:-3>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: without count_include_pad every window must overlap the input: pad [0, 0, 2, 0] must be below the kernel [2, 2]

// -----

func.func @avg_pool_divisor(%x: tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %p = dgq.avg_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, count_include_pad = true, divisor_override = -1 : i64} : tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.5:-3>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: divisor_override must be >= 1, got -1

// -----

func.func @softmax_grid(%x: tensor<?x10x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %s = dgq.softmax %x {axis = 1 : i64} : tensor<?x10x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x10x!dgq.uniform<i8:f32, 0.5:-3>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dgq.softmax result must be on the fixed grid i8, scale 0.00390625, zero point -128, got !dgq.uniform<i8:f32, 0.5:-3>

// -----

// The fixed grid is i8, not a wider storage type.
func.func @sigmoid_storage(%x: tensor<?x10x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %s = dgq.sigmoid %x : tensor<?x10x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x10x!dgq.uniform<i16:f32, 0.00390625:-128>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dgq.sigmoid result must be on the fixed grid i8, scale 0.00390625, zero point -128, got !dgq.uniform<i16:f32, 0.00390625:-128>

// -----

func.func @sigmoid_shape(%x: tensor<?x10x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %s = dgq.sigmoid %x : tensor<?x10x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x5x!dgq.uniform<i8:f32, 0.00390625:-128>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result has shape [?x5], expected [?x10]

// -----

func.func @softmax_batch(%x: tensor<?x10x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %s = dgq.softmax %x {axis = 0 : i64} : tensor<?x10x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x10x!dgq.uniform<i8:f32, 0.00390625:-128>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dgq.softmax cannot operate along the batch axis (axis 0)

// -----

// dgq axes are non-negative.
func.func @softmax_axis(%x: tensor<?x10x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %s = dgq.softmax %x {axis = -1 : i64} : tensor<?x10x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x10x!dgq.uniform<i8:f32, 0.00390625:-128>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dgq.softmax: axis -1 is out of range [0, 2)

// -----

func.func @concat_grid(%x: tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>, %y: tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.25:-3>>) {
  %c = dgq.concat %x, %y {axis = 1 : i64} : (tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>, tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.25:-3>>) -> tensor<?x4x5x5x!dgq.uniform<i8:f32, 0.5:-3>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dgq.concat must keep the quantization grid: input #1 is !dgq.uniform<i8:f32, 0.25:-3>, input #0 is !dgq.uniform<i8:f32, 0.5:-3>

// -----

func.func @concat_batch(%x: tensor<2x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %c = dgq.concat %x, %x {axis = 0 : i64} : (tensor<2x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>, tensor<2x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>) -> tensor<4x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dgq.concat cannot operate along the batch axis (axis 0)

// -----

func.func @concat_none() {
  %c = dgq.concat {axis = 1 : i64} : () -> tensor<?x2x!dgq.uniform<i8:f32, 0.5:-3>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dgq.concat needs at least one input

// -----

func.func @concat_sum(%x: tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %c = dgq.concat %x, %x {axis = 2 : i64} : (tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>, tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>) -> tensor<?x2x5x10x!dgq.uniform<i8:f32, 0.5:-3>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: input #0 without axis 2 has shape [?x2x5], expected [?x2x10]

// -----

func.func @resize_mode(%x: tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %r = dgq.resize_nearest %x {mode = "linear"} : tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x2x10x10x!dgq.uniform<i8:f32, 0.5:-3>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: mode must be one of nearest, nearest-exact, got 'linear'

// -----

func.func @resize_grid(%x: tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %r = dgq.resize_nearest %x {mode = "nearest"} : tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x2x10x10x!dgq.uniform<i8:f32, 0.5>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dgq.resize_nearest must keep the quantization grid: result is !dgq.uniform<i8:f32, 0.5>, input is !dgq.uniform<i8:f32, 0.5:-3>

// -----

func.func @resize_batch(%x: tensor<1x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %r = dgq.resize_nearest %x {mode = "nearest"} : tensor<1x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<2x2x10x10x!dgq.uniform<i8:f32, 0.5:-3>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dgq.resize_nearest cannot change the batch-axis extent (1 -> 2)

// -----

func.func @pad_negative(%x: tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %p = dgq.pad %x {pad = array<i64: 1, -1, 0, 0>} : tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: 'pad' entries must be >= 0, got [1, -1, 0, 0]

// -----

// pad is [top, bottom, left, right].
func.func @pad_result(%x: tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %p = dgq.pad %x {pad = array<i64: 1, 0, 2, 1>} : tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x2x8x6x!dgq.uniform<i8:f32, 0.5:-3>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result has shape [?x2x8x6], expected [?x2x6x8]

// -----

func.func @flatten_rank(%x: tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %f = dgq.flatten_channels_last %x : tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x5x10x!dgq.uniform<i8:f32, 0.5:-3>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: input must be rank 4 (NCHW) and result rank 2

// -----

func.func @flatten_count(%x: tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %f = dgq.flatten_channels_last %x : tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x25x!dgq.uniform<i8:f32, 0.5:-3>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: element count per batch item changes (50 -> 25)

// -----

func.func @transpose_feature_rank(%x: tensor<?x2x3x4x5x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %t = dgq.transpose %x {perm = array<i64: 0, 1, 2, 4, 3>} : tensor<?x2x3x4x5x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x2x3x5x4x!dgq.uniform<i8:f32, 0.5:-3>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dgq.transpose supports feature rank 2 or 3 (rank without the batch axis), got rank 5 (feature rank 4)

// -----

func.func @transpose_batch(%x: tensor<4x5x8x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %t = dgq.transpose %x {perm = array<i64: 1, 0, 2>} : tensor<4x5x8x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<5x4x8x!dgq.uniform<i8:f32, 0.5:-3>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dgq.transpose cannot move the batch axis

// -----

func.func @transpose_not_a_permutation(%x: tensor<?x5x8x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %t = dgq.transpose %x {perm = array<i64: 0, 1, 1>} : tensor<?x5x8x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x5x5x!dgq.uniform<i8:f32, 0.5:-3>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: perm [0, 1, 1] is not a permutation of the 3 axes

// -----

func.func @slice_spatial(%x: tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %s = dgq.slice %x {axis = 1 : i64, start = 0 : i64, end = 1 : i64} : tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x1x5x5x!dgq.uniform<i8:f32, 0.5:-3>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dgq.slice is only supported on sequence-domain tensors, and its input is a spatial feature map

// -----

func.func @slice_batch(%x: tensor<4x5x8x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %s = dgq.slice %x {axis = 0 : i64, start = 0 : i64, end = 2 : i64} : tensor<4x5x8x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<2x5x8x!dgq.uniform<i8:f32, 0.5:-3>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dgq.slice cannot operate along the batch axis (axis 0)

// -----

func.func @slice_empty(%x: tensor<?x5x8x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %s = dgq.slice %x {axis = 1 : i64, start = 3 : i64, end = 3 : i64} : tensor<?x5x8x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x0x8x!dgq.uniform<i8:f32, 0.5:-3>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dgq.slice needs 0 <= start < end, got start 3, end 3

// -----

func.func @slice_past_the_end(%x: tensor<?x5x8x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %s = dgq.slice %x {axis = 1 : i64, start = 3 : i64, end = 6 : i64} : tensor<?x5x8x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x3x8x!dgq.uniform<i8:f32, 0.5:-3>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dgq.slice end 6 exceeds the extent 5 of axis 1

// -----

func.func @mul_constant_over_the_batch(%x: tensor<?x5x8x!dgq.uniform<i8:f32, 0.5:-3>>, %c: tensor<2x5x8x!dgq.uniform<i8<-127:127>:f32, 0.0078>>) {
  %m = dgq.mul_constant %x, %c : (tensor<?x5x8x!dgq.uniform<i8:f32, 0.5:-3>>, tensor<2x5x8x!dgq.uniform<i8<-127:127>:f32, 0.0078>>) -> tensor<?x5x8x!dgq.uniform<i8:f32, 0.25:1>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: constant must not vary along the batch axis (extent 1 there)

// -----

func.func @mul_constant_result_shape(%x: tensor<?x5x8x!dgq.uniform<i8:f32, 0.5:-3>>, %c: tensor<8x!dgq.uniform<i8<-127:127>:f32, 0.0078>>) {
  %m = dgq.mul_constant %x, %c : (tensor<?x5x8x!dgq.uniform<i8:f32, 0.5:-3>>, tensor<8x!dgq.uniform<i8<-127:127>:f32, 0.0078>>) -> tensor<?x5x4x!dgq.uniform<i8:f32, 0.25:1>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: result has shape [?x5x4], expected [?x5x8]

// -----

func.func @matmul_negative_factor(%q: tensor<?x5x4x!dgq.uniform<i8:f32, 0.5:-3>>, %k: tensor<?x4x6x!dgq.uniform<i8:f32, 0.25:2>>) {
  %s = dgq.matmul %q, %k {factor = -5.000000e-01 : f64} : (tensor<?x5x4x!dgq.uniform<i8:f32, 0.5:-3>>, tensor<?x4x6x!dgq.uniform<i8:f32, 0.25:2>>) -> tensor<?x5x6x!dgq.uniform<i8:f32, 0.125:1>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: factor must be > 0, got -0.5

// -----

func.func @norm_gamma_length(%x: tensor<?x5x4x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %n = dgq.norm %x {kind = "layer", eps = 1.0e-05 : f64, gamma = array<f64: 1.0, 1.0>, beta = array<f64: 0.0, 0.0, 0.0, 0.0>} : tensor<?x5x4x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x5x4x!dgq.uniform<i8:f32, 0.03125:2>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: 'gamma' must have 4 elements, got 2

// -----

func.func @norm_gamma_finite(%x: tensor<?x5x4x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %n = dgq.norm %x {kind = "layer", eps = 1.0e-05 : f64, gamma = array<f64: 1.0, 1.0e400, 1.0, 1.0>, beta = array<f64: 0.0, 0.0, 0.0, 0.0>} : tensor<?x5x4x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x5x4x!dgq.uniform<i8:f32, 0.03125:2>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: 'gamma' must be finite

// -----

func.func @norm_eps(%x: tensor<?x5x4x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %n = dgq.norm %x {kind = "layer", eps = -1.0 : f64, gamma = array<f64: 1.0, 1.0, 1.0, 1.0>, beta = array<f64: 0.0, 0.0, 0.0, 0.0>} : tensor<?x5x4x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x5x4x!dgq.uniform<i8:f32, 0.03125:2>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: eps must be > 0, got -1.0

// -----

func.func @norm_rms_beta(%x: tensor<?x5x4x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %n = dgq.norm %x {kind = "rms", eps = 1.0e-05 : f64, gamma = array<f64: 1.0, 1.0, 1.0, 1.0>, beta = array<f64: 0.0, 0.5, 0.0, 0.0>} : tensor<?x5x4x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x5x4x!dgq.uniform<i8:f32, 0.03125:2>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: an rms norm has no bias: 'beta' must be all zeros

// -----

func.func @norm_spatial(%x: tensor<?x2x5x4x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %n = dgq.norm %x {kind = "rms", eps = 1.0e-05 : f64, gamma = array<f64: 1.0, 1.0, 1.0, 1.0>, beta = array<f64: 0.0, 0.0, 0.0, 0.0>} : tensor<?x2x5x4x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x2x5x4x!dgq.uniform<i8:f32, 0.03125:2>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dgq.norm is only supported on sequence-domain tensors, and its input is a spatial feature map

// -----

func.func @norm_heads(%s: tensor<?x5x8x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %h = dgq.reshape %s : tensor<?x5x8x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x5x2x4x!dgq.uniform<i8:f32, 0.5:-3>>
  %n = dgq.norm %h {kind = "rms", eps = 1.0e-05 : f64, gamma = array<f64: 1.0, 1.0, 1.0, 1.0>, beta = array<f64: 0.0, 0.0, 0.0, 0.0>} : tensor<?x5x2x4x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x5x2x4x!dgq.uniform<i8:f32, 0.03125:2>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: dgq.norm supports feature rank 1 or 2 (rank without the batch axis), got rank 4 (feature rank 3)
