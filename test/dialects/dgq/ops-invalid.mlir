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

func.func @conv_groups(%x: tensor<?x2x4x4x!dgq.uniform<i8:f32, 0.5>>, %w: tensor<2x1x3x3x!dgq.uniform<i8:f32, 0.5>>) {
  %c = dgq.conv2d %x, %w {stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, groups = 2 : i64} : (tensor<?x2x4x4x!dgq.uniform<i8:f32, 0.5>>, tensor<2x1x3x3x!dgq.uniform<i8:f32, 0.5>>) -> tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.5>>
  func.return
}
// CHECK:      {{^//[ ]-----$}}
// CHECK-NEXT: only dense convolution (groups = 1) is supported, got 2

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
// CHECK-NEXT: dgq.reshape must keep the quantization grid

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
