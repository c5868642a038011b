// Every pattern of convert-dgtorch-to-dgq, on inputs shaped like convert_pt2e's output.
// RUN: dg-opt %s --split-input-file -p convert-dgtorch-to-dgq | filecheck %s
// RUN: dg-opt %s --split-input-file -p convert-dgtorch-to-dgq --print-debuginfo | filecheck %s --check-prefix=LOC

// LegalizeQuantizePerTensor + LegalizeDequantizePerTensor: the graph boundary.
// CHECK-LABEL: func.func @quantize_dequantize
// CHECK-NEXT:    %xq = dgq.quantize %x : tensor<?x4xf32> -> tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>>
// CHECK-NEXT:    %xd = dgq.dequantize %xq : tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x4xf32>
// CHECK-NEXT:    func.return %xd : tensor<?x4xf32>
func.func @quantize_dequantize(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xf32> -> tensor<?x4xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xi8> -> tensor<?x4xf32>
  func.return %xd : tensor<?x4xf32>
}

// -----

// The storage range comes from quant_min/quant_max.
// CHECK-LABEL: func.func @narrow_range
// CHECK-NEXT:    %xq = dgq.quantize %x : tensor<?x4xf32> -> tensor<?x4x!dgq.uniform<i8<-127:127>:f32, 0.25>>
// CHECK-NEXT:    %xd = dgq.dequantize %xq : tensor<?x4x!dgq.uniform<i8<-127:127>:f32, 0.25>> -> tensor<?x4xf32>
func.func @narrow_range(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.25 : f64, zero_point = 0 : i64, quant_min = -127 : i64, quant_max = 127 : i64} : tensor<?x4xf32> -> tensor<?x4xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.25 : f64, zero_point = 0 : i64, quant_min = -127 : i64, quant_max = 127 : i64} : tensor<?x4xi8> -> tensor<?x4xf32>
  func.return %xd : tensor<?x4xf32>
}

// -----

// LegalizeQuantizedConstant, per channel: the parameters move into a per-axis type.
// CHECK-LABEL: func.func @quantized_constant_per_channel
// CHECK-NEXT:    %w = dgq.constant {value = dense<{{\[}}[1, -2, 3], [127, -127, 0]]> : tensor<2x3xi8>} : tensor<2x3x!dgq.uniform<i8<-127:127>:f32:0, {0.5,0.25}>>
// CHECK-NEXT:    %wd = dgq.dequantize %w : tensor<2x3x!dgq.uniform<i8<-127:127>:f32:0, {0.5,0.25}>> -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %wd : tensor<2x3xf32>
func.func @quantized_constant_per_channel() -> tensor<2x3xf32> {
  %w = dgtorch.constant {value = dense<[[1, -2, 3], [127, -127, 0]]> : tensor<2x3xi8>} : tensor<2x3xi8>
  %wd = dgtorch.dequantize_per_channel %w {scales = array<f64: 0.5, 0.25>, zero_points = array<i64: 0, 0>, axis = 0 : i64, quant_min = -127 : i64, quant_max = 127 : i64} : tensor<2x3xi8> -> tensor<2x3xf32>
  func.return %wd : tensor<2x3xf32>
}

// -----

// LegalizeQuantizedConstant, per tensor, with an i32 (bias) constant.
// CHECK-LABEL: func.func @quantized_constant_per_tensor
// CHECK-NEXT:    %b = dgq.constant {value = dense<[100, -100]> : tensor<2xi32>} : tensor<2x!dgq.uniform<i32:f32, 0.125>>
// CHECK-NEXT:    %bd = dgq.dequantize %b : tensor<2x!dgq.uniform<i32:f32, 0.125>> -> tensor<2xf32>
func.func @quantized_constant_per_tensor() -> tensor<2xf32> {
  %b = dgtorch.constant {value = dense<[100, -100]> : tensor<2xi32>} : tensor<2xi32>
  %bd = dgtorch.dequantize_per_tensor %b {scale = 0.125 : f64, zero_point = 0 : i64, quant_min = -2147483648 : i64, quant_max = 2147483647 : i64} : tensor<2xi32> -> tensor<2xf32>
  func.return %bd : tensor<2xf32>
}

// -----

// LegalizeConv2d: torch's padding [ph, pw] = [1, 2] becomes [top, bottom, left, right].
// CHECK-LABEL: func.func @conv2d
// CHECK-NEXT:    %xq = dgq.quantize %x : tensor<?x1x4x4xf32> -> tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.5:3>>
// CHECK-NEXT:    %w = dgq.constant {{.*}} : tensor<2x1x3x3x!dgq.uniform<i8<-127:127>:f32:0, {0.25,0.125}>>
// CHECK-NEXT:    %b = dgq.constant {value = dense<[8, -8]> : tensor<2xi32>} : tensor<2x!dgq.uniform<i32:f32:0, {0.125,0.0625}>>
// CHECK-NEXT:    %yq = dgq.conv2d %xq, %w, %b {stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 2, 2>} : (tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.5:3>>, tensor<2x1x3x3x!dgq.uniform<i8<-127:127>:f32:0, {0.25,0.125}>>, tensor<2x!dgq.uniform<i32:f32:0, {0.125,0.0625}>>) -> tensor<?x2x2x3x!dgq.uniform<i8:f32, 0.25:-1>>
// CHECK-NEXT:    %yd = dgq.dequantize %yq : tensor<?x2x2x3x!dgq.uniform<i8:f32, 0.25:-1>> -> tensor<?x2x2x3xf32>
// CHECK-NEXT:    func.return %yd : tensor<?x2x2x3xf32>
// LOC-LABEL: func.func @conv2d
// LOC:         dgq.conv2d {{.*}} loc("model.py":7:0)
func.func @conv2d(%x: tensor<?x1x4x4xf32>) -> tensor<?x2x2x3xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x4xf32> -> tensor<?x1x4x4xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x4xi8> -> tensor<?x1x4x4xf32>
  %w = dgtorch.constant {value = dense<[[[[1, 2, 3], [4, 5, 6], [7, 8, 9]]], [[[-1, -2, -3], [-4, -5, -6], [-7, -8, -9]]]]> : tensor<2x1x3x3xi8>} : tensor<2x1x3x3xi8>
  %wd = dgtorch.dequantize_per_channel %w {scales = array<f64: 0.25, 0.125>, zero_points = array<i64: 0, 0>, axis = 0 : i64, quant_min = -127 : i64, quant_max = 127 : i64} : tensor<2x1x3x3xi8> -> tensor<2x1x3x3xf32>
  %b = dgtorch.constant {value = dense<[8, -8]> : tensor<2xi32>} : tensor<2xi32>
  %bd = dgtorch.dequantize_per_channel %b {scales = array<f64: 0.125, 0.0625>, zero_points = array<i64: 0, 0>, axis = 0 : i64, quant_min = -2147483648 : i64, quant_max = 2147483647 : i64} : tensor<2xi32> -> tensor<2xf32>
  %y = dgtorch.conv2d %xd, %wd, %bd {stride = array<i64: 2, 2>, padding = array<i64: 1, 2>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<?x1x4x4xf32>, tensor<2x1x3x3xf32>, tensor<2xf32>) -> tensor<?x2x2x3xf32> loc("model.py":7:0)
  %yq = dgtorch.quantize_per_tensor %y {scale = 0.25 : f64, zero_point = -1 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x2x3xf32> -> tensor<?x2x2x3xi8>
  %yd = dgtorch.dequantize_per_tensor %yq {scale = 0.25 : f64, zero_point = -1 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x2x3xi8> -> tensor<?x2x2x3xf32>
  func.return %yd : tensor<?x2x2x3xf32>
}

// -----

// FuseReluTail on a conv2d (without bias).
// CHECK-LABEL: func.func @conv2d_relu
// CHECK:         %rq = dgq.conv2d %xq, %w {stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, fused_activation = "relu"} : (tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.5:3>>, tensor<2x1x3x3x!dgq.uniform<i8<-127:127>:f32:0, {0.25,0.125}>>) -> tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.25:-128>>
// CHECK-NEXT:    %rd = dgq.dequantize %rq
// CHECK-NOT:     dgtorch.
// LOC-LABEL: func.func @conv2d_relu
// LOC:         dgq.conv2d {{.*}} loc("model.py":8:0)
func.func @conv2d_relu(%x: tensor<?x1x4x4xf32>) -> tensor<?x2x2x2xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x4xf32> -> tensor<?x1x4x4xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x4xi8> -> tensor<?x1x4x4xf32>
  %w = dgtorch.constant {value = dense<[[[[1, 2, 3], [4, 5, 6], [7, 8, 9]]], [[[-1, -2, -3], [-4, -5, -6], [-7, -8, -9]]]]> : tensor<2x1x3x3xi8>} : tensor<2x1x3x3xi8>
  %wd = dgtorch.dequantize_per_channel %w {scales = array<f64: 0.25, 0.125>, zero_points = array<i64: 0, 0>, axis = 0 : i64, quant_min = -127 : i64, quant_max = 127 : i64} : tensor<2x1x3x3xi8> -> tensor<2x1x3x3xf32>
  %y = dgtorch.conv2d %xd, %wd {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<?x1x4x4xf32>, tensor<2x1x3x3xf32>) -> tensor<?x2x2x2xf32> loc("model.py":8:0)
  %r = dgtorch.relu %y : tensor<?x2x2x2xf32> -> tensor<?x2x2x2xf32> loc("model.py":9:0)
  %rq = dgtorch.quantize_per_tensor %r {scale = 0.25 : f64, zero_point = -128 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x2x2xf32> -> tensor<?x2x2x2xi8>
  %rd = dgtorch.dequantize_per_tensor %rq {scale = 0.25 : f64, zero_point = -128 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x2x2xi8> -> tensor<?x2x2x2xf32>
  func.return %rd : tensor<?x2x2x2xf32>
}

// -----

// LegalizeLinear.
// CHECK-LABEL: func.func @linear
// CHECK-NEXT:    %xq = dgq.quantize %x
// CHECK-NEXT:    %w = dgq.constant {value = dense<{{\[}}[1, 2, 3], [-4, -5, -6]]> : tensor<2x3xi8>} : tensor<2x3x!dgq.uniform<i8<-127:127>:f32:0, {0.25,0.125}>>
// CHECK-NEXT:    %b = dgq.constant {value = dense<[3, 4]> : tensor<2xi32>} : tensor<2x!dgq.uniform<i32:f32:0, {0.125,0.0625}>>
// CHECK-NEXT:    %yq = dgq.linear %xq, %w, %b : (tensor<?x3x!dgq.uniform<i8:f32, 0.5:3>>, tensor<2x3x!dgq.uniform<i8<-127:127>:f32:0, {0.25,0.125}>>, tensor<2x!dgq.uniform<i32:f32:0, {0.125,0.0625}>>) -> tensor<?x2x!dgq.uniform<i8:f32, 0.25:-1>>
// CHECK-NEXT:    %yd = dgq.dequantize %yq
func.func @linear(%x: tensor<?x3xf32>) -> tensor<?x2xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x3xf32> -> tensor<?x3xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x3xi8> -> tensor<?x3xf32>
  %w = dgtorch.constant {value = dense<[[1, 2, 3], [-4, -5, -6]]> : tensor<2x3xi8>} : tensor<2x3xi8>
  %wd = dgtorch.dequantize_per_channel %w {scales = array<f64: 0.25, 0.125>, zero_points = array<i64: 0, 0>, axis = 0 : i64, quant_min = -127 : i64, quant_max = 127 : i64} : tensor<2x3xi8> -> tensor<2x3xf32>
  %b = dgtorch.constant {value = dense<[3, 4]> : tensor<2xi32>} : tensor<2xi32>
  %bd = dgtorch.dequantize_per_channel %b {scales = array<f64: 0.125, 0.0625>, zero_points = array<i64: 0, 0>, axis = 0 : i64, quant_min = -2147483648 : i64, quant_max = 2147483647 : i64} : tensor<2xi32> -> tensor<2xf32>
  %y = dgtorch.linear %xd, %wd, %bd : (tensor<?x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<?x2xf32>
  %yq = dgtorch.quantize_per_tensor %y {scale = 0.25 : f64, zero_point = -1 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xf32> -> tensor<?x2xi8>
  %yd = dgtorch.dequantize_per_tensor %yq {scale = 0.25 : f64, zero_point = -1 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xi8> -> tensor<?x2xf32>
  func.return %yd : tensor<?x2xf32>
}

// -----

// FuseReluTail on a linear.
// CHECK-LABEL: func.func @linear_relu
// CHECK:         %rq = dgq.linear %xq, %w {fused_activation = "relu"} : (tensor<?x3x!dgq.uniform<i8:f32, 0.5:3>>, tensor<2x3x!dgq.uniform<i8<-127:127>:f32:0, {0.25,0.125}>>) -> tensor<?x2x!dgq.uniform<i8:f32, 0.25:-128>>
// CHECK-NOT:     dgtorch.
func.func @linear_relu(%x: tensor<?x3xf32>) -> tensor<?x2xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x3xf32> -> tensor<?x3xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x3xi8> -> tensor<?x3xf32>
  %w = dgtorch.constant {value = dense<[[1, 2, 3], [-4, -5, -6]]> : tensor<2x3xi8>} : tensor<2x3xi8>
  %wd = dgtorch.dequantize_per_channel %w {scales = array<f64: 0.25, 0.125>, zero_points = array<i64: 0, 0>, axis = 0 : i64, quant_min = -127 : i64, quant_max = 127 : i64} : tensor<2x3xi8> -> tensor<2x3xf32>
  %y = dgtorch.linear %xd, %wd : (tensor<?x3xf32>, tensor<2x3xf32>) -> tensor<?x2xf32>
  %r = dgtorch.relu %y : tensor<?x2xf32> -> tensor<?x2xf32>
  %rq = dgtorch.quantize_per_tensor %r {scale = 0.25 : f64, zero_point = -128 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xf32> -> tensor<?x2xi8>
  %rd = dgtorch.dequantize_per_tensor %rq {scale = 0.25 : f64, zero_point = -128 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xi8> -> tensor<?x2xf32>
  func.return %rd : tensor<?x2xf32>
}

// -----

// LegalizeAdd: each operand keeps its own grid.
// CHECK-LABEL: func.func @add
// CHECK-NEXT:    %aq = dgq.quantize %a : tensor<?x4xf32> -> tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>>
// CHECK-NEXT:    %bq = dgq.quantize %b : tensor<?x4xf32> -> tensor<?x4x!dgq.uniform<i8:f32, 0.25:-2>>
// CHECK-NEXT:    %sq = dgq.add %aq, %bq : (tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>>, tensor<?x4x!dgq.uniform<i8:f32, 0.25:-2>>) -> tensor<?x4x!dgq.uniform<i8:f32, 0.75:1>>
// CHECK-NEXT:    %sd = dgq.dequantize %sq
func.func @add(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %aq = dgtorch.quantize_per_tensor %a {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xf32> -> tensor<?x4xi8>
  %ad = dgtorch.dequantize_per_tensor %aq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xi8> -> tensor<?x4xf32>
  %bq = dgtorch.quantize_per_tensor %b {scale = 0.25 : f64, zero_point = -2 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xf32> -> tensor<?x4xi8>
  %bd = dgtorch.dequantize_per_tensor %bq {scale = 0.25 : f64, zero_point = -2 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xi8> -> tensor<?x4xf32>
  %s = dgtorch.add %ad, %bd : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %sq = dgtorch.quantize_per_tensor %s {scale = 0.75 : f64, zero_point = 1 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xf32> -> tensor<?x4xi8>
  %sd = dgtorch.dequantize_per_tensor %sq {scale = 0.75 : f64, zero_point = 1 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xi8> -> tensor<?x4xf32>
  func.return %sd : tensor<?x4xf32>
}

// -----

// FuseReluTail on an add.
// CHECK-LABEL: func.func @add_relu
// CHECK:         %rq = dgq.add %aq, %bq {fused_activation = "relu"} : (tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>>, tensor<?x4x!dgq.uniform<i8:f32, 0.25:-2>>) -> tensor<?x4x!dgq.uniform<i8:f32, 0.75:-128>>
// CHECK-NOT:     dgtorch.
func.func @add_relu(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %aq = dgtorch.quantize_per_tensor %a {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xf32> -> tensor<?x4xi8>
  %ad = dgtorch.dequantize_per_tensor %aq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xi8> -> tensor<?x4xf32>
  %bq = dgtorch.quantize_per_tensor %b {scale = 0.25 : f64, zero_point = -2 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xf32> -> tensor<?x4xi8>
  %bd = dgtorch.dequantize_per_tensor %bq {scale = 0.25 : f64, zero_point = -2 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xi8> -> tensor<?x4xf32>
  %s = dgtorch.add %ad, %bd : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %r = dgtorch.relu %s : tensor<?x4xf32> -> tensor<?x4xf32>
  %rq = dgtorch.quantize_per_tensor %r {scale = 0.75 : f64, zero_point = -128 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xf32> -> tensor<?x4xi8>
  %rd = dgtorch.dequantize_per_tensor %rq {scale = 0.75 : f64, zero_point = -128 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xi8> -> tensor<?x4xf32>
  func.return %rd : tensor<?x4xf32>
}

// -----

// LegalizeReshape: a flatten between the dequantize and the linear that consumes it.
// CHECK-LABEL: func.func @flatten_linear
// CHECK-NEXT:    %xq = dgq.quantize %x : tensor<?x2x2x2xf32> -> tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.5:3>>
// CHECK-NEXT:    %f = dgq.reshape %xq : tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x8x!dgq.uniform<i8:f32, 0.5:3>>
// CHECK-NEXT:    %w = dgq.constant
// CHECK-NEXT:    %yq = dgq.linear %f, %w : (tensor<?x8x!dgq.uniform<i8:f32, 0.5:3>>, tensor<1x8x!dgq.uniform<i8<-127:127>:f32:0, {0.25}>>) -> tensor<?x1x!dgq.uniform<i8:f32, 0.25:-1>>
func.func @flatten_linear(%x: tensor<?x2x2x2xf32>) -> tensor<?x1xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x2x2xf32> -> tensor<?x2x2x2xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x2x2xi8> -> tensor<?x2x2x2xf32>
  %f = dgtorch.flatten %xd {start_dim = 1 : i64, end_dim = -1 : i64} : tensor<?x2x2x2xf32> -> tensor<?x8xf32>
  %w = dgtorch.constant {value = dense<[[1, 2, 3, 4, 5, 6, 7, 8]]> : tensor<1x8xi8>} : tensor<1x8xi8>
  %wd = dgtorch.dequantize_per_channel %w {scales = array<f64: 0.25>, zero_points = array<i64: 0>, axis = 0 : i64, quant_min = -127 : i64, quant_max = 127 : i64} : tensor<1x8xi8> -> tensor<1x8xf32>
  %y = dgtorch.linear %f, %wd : (tensor<?x8xf32>, tensor<1x8xf32>) -> tensor<?x1xf32>
  %yq = dgtorch.quantize_per_tensor %y {scale = 0.25 : f64, zero_point = -1 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1xf32> -> tensor<?x1xi8>
  %yd = dgtorch.dequantize_per_tensor %yq {scale = 0.25 : f64, zero_point = -1 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1xi8> -> tensor<?x1xf32>
  func.return %yd : tensor<?x1xf32>
}

// -----

// FoldDequantizeQuantize: a quantize restating its input's grid after a reshape disappears.
// CHECK-LABEL: func.func @reshape_same_grid
// CHECK-NEXT:    %xq = dgq.quantize %x
// CHECK-NEXT:    %v = dgq.reshape %xq : tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x4x2x!dgq.uniform<i8:f32, 0.5:3>>
// CHECK-NEXT:    %vd = dgq.dequantize %v : tensor<?x4x2x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x4x2xf32>
// CHECK-NEXT:    func.return %vd
func.func @reshape_same_grid(%x: tensor<?x2x2x2xf32>) -> tensor<?x4x2xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x2x2xf32> -> tensor<?x2x2x2xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x2x2xi8> -> tensor<?x2x2x2xf32>
  %v = dgtorch.reshape %xd : tensor<?x2x2x2xf32> -> tensor<?x4x2xf32>
  %vq = dgtorch.quantize_per_tensor %v {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4x2xf32> -> tensor<?x4x2xi8>
  %vd = dgtorch.dequantize_per_tensor %vq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4x2xi8> -> tensor<?x4x2xf32>
  func.return %vd : tensor<?x4x2xf32>
}

// -----

// FoldDequantizeQuantize: onto another grid it becomes a requantize.
// CHECK-LABEL: func.func @requantize
// CHECK-NEXT:    %xq = dgq.quantize %x : tensor<?x4xf32> -> tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>>
// CHECK-NEXT:    %yq = dgq.requantize %xq : tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x4x!dgq.uniform<i8:f32, 0.125:-7>>
// CHECK-NEXT:    %yd = dgq.dequantize %yq
func.func @requantize(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xf32> -> tensor<?x4xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xi8> -> tensor<?x4xf32>
  %yq = dgtorch.quantize_per_tensor %xd {scale = 0.125 : f64, zero_point = -7 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xf32> -> tensor<?x4xi8>
  %yd = dgtorch.dequantize_per_tensor %yq {scale = 0.125 : f64, zero_point = -7 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xi8> -> tensor<?x4xf32>
  func.return %yd : tensor<?x4xf32>
}

// -----

// A residual block: one dequantized value feeds both a conv and the add.
// CHECK-LABEL: func.func @residual_block
// CHECK-NEXT:    %xq = dgq.quantize %x
// CHECK-NEXT:    %w = dgq.constant
// CHECK-NEXT:    %cq = dgq.conv2d %xq, %w {stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>} : (tensor<?x1x2x2x!dgq.uniform<i8:f32, 0.5:3>>, tensor<1x1x1x1x!dgq.uniform<i8<-127:127>:f32:0, {0.25}>>) -> tensor<?x1x2x2x!dgq.uniform<i8:f32, 0.25>>
// CHECK-NEXT:    %rq = dgq.add %cq, %xq {fused_activation = "relu"} : (tensor<?x1x2x2x!dgq.uniform<i8:f32, 0.25>>, tensor<?x1x2x2x!dgq.uniform<i8:f32, 0.5:3>>) -> tensor<?x1x2x2x!dgq.uniform<i8:f32, 0.5:-128>>
// CHECK-NEXT:    %rd = dgq.dequantize %rq
// CHECK-NEXT:    func.return %rd
func.func @residual_block(%x: tensor<?x1x2x2xf32>) -> tensor<?x1x2x2xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x2x2xf32> -> tensor<?x1x2x2xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x2x2xi8> -> tensor<?x1x2x2xf32>
  %w = dgtorch.constant {value = dense<64> : tensor<1x1x1x1xi8>} : tensor<1x1x1x1xi8>
  %wd = dgtorch.dequantize_per_channel %w {scales = array<f64: 0.25>, zero_points = array<i64: 0>, axis = 0 : i64, quant_min = -127 : i64, quant_max = 127 : i64} : tensor<1x1x1x1xi8> -> tensor<1x1x1x1xf32>
  %c = dgtorch.conv2d %xd, %wd {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<?x1x2x2xf32>, tensor<1x1x1x1xf32>) -> tensor<?x1x2x2xf32>
  %cq = dgtorch.quantize_per_tensor %c {scale = 0.25 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x2x2xf32> -> tensor<?x1x2x2xi8>
  %cd = dgtorch.dequantize_per_tensor %cq {scale = 0.25 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x2x2xi8> -> tensor<?x1x2x2xf32>
  %s = dgtorch.add %cd, %xd : (tensor<?x1x2x2xf32>, tensor<?x1x2x2xf32>) -> tensor<?x1x2x2xf32>
  %r = dgtorch.relu %s : tensor<?x1x2x2xf32> -> tensor<?x1x2x2xf32>
  %rq = dgtorch.quantize_per_tensor %r {scale = 0.5 : f64, zero_point = -128 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x2x2xf32> -> tensor<?x1x2x2xi8>
  %rd = dgtorch.dequantize_per_tensor %rq {scale = 0.5 : f64, zero_point = -128 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x2x2xi8> -> tensor<?x1x2x2xf32>
  func.return %rd : tensor<?x1x2x2xf32>
}

// -----

// LegalizeConv2d: a depthwise convolution (groups = in = out channels) keeps its groups.
// CHECK-LABEL: func.func @depthwise_conv2d
// CHECK-NEXT:    %xq = dgq.quantize %x
// CHECK-NEXT:    %w = dgq.constant {{.*}} : tensor<2x1x2x2x!dgq.uniform<i8<-127:127>:f32:0, {0.25,0.125}>>
// CHECK-NEXT:    %yq = dgq.conv2d %xq, %w {stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 1, 1>, groups = 2 : i64} : (tensor<?x2x4x4x!dgq.uniform<i8:f32, 0.5:3>>, tensor<2x1x2x2x!dgq.uniform<i8<-127:127>:f32:0, {0.25,0.125}>>) -> tensor<?x2x3x5x!dgq.uniform<i8:f32, 0.25:-1>>
// CHECK-NEXT:    %yd = dgq.dequantize %yq
func.func @depthwise_conv2d(%x: tensor<?x2x4x4xf32>) -> tensor<?x2x3x5xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x4x4xf32> -> tensor<?x2x4x4xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x4x4xi8> -> tensor<?x2x4x4xf32>
  %w = dgtorch.constant {value = dense<[[[[1, 2], [3, 4]]], [[[-1, -2], [-3, -4]]]]> : tensor<2x1x2x2xi8>} : tensor<2x1x2x2xi8>
  %wd = dgtorch.dequantize_per_channel %w {scales = array<f64: 0.25, 0.125>, zero_points = array<i64: 0, 0>, axis = 0 : i64, quant_min = -127 : i64, quant_max = 127 : i64} : tensor<2x1x2x2xi8> -> tensor<2x1x2x2xf32>
  %y = dgtorch.conv2d %xd, %wd {stride = array<i64: 1, 1>, padding = array<i64: 0, 1>, dilation = array<i64: 1, 1>, groups = 2 : i64} : (tensor<?x2x4x4xf32>, tensor<2x1x2x2xf32>) -> tensor<?x2x3x5xf32>
  %yq = dgtorch.quantize_per_tensor %y {scale = 0.25 : f64, zero_point = -1 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x3x5xf32> -> tensor<?x2x3x5xi8>
  %yd = dgtorch.dequantize_per_tensor %yq {scale = 0.25 : f64, zero_point = -1 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x3x5xi8> -> tensor<?x2x3x5xf32>
  func.return %yd : tensor<?x2x3x5xf32>
}

// -----

// LegalizeMaxPool2d: the pool moves to the quantized side; its quantize restates the grid and folds.
// CHECK-LABEL: func.func @max_pool2d
// CHECK-NEXT:    %xq = dgq.quantize %x
// CHECK-NEXT:    %p = dgq.max_pool2d %xq {kernel = array<i64: 2, 2>, stride = array<i64: 2, 1>, pad = array<i64: 0, 0, 0, 0>} : tensor<?x1x4x5x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x1x2x4x!dgq.uniform<i8:f32, 0.5:3>>
// CHECK-NEXT:    %pd = dgq.dequantize %p : tensor<?x1x2x4x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x1x2x4xf32>
// CHECK-NEXT:    func.return %pd
// LOC-LABEL: func.func @max_pool2d
// LOC:         dgq.max_pool2d {{.*}} loc("pool.py":3:0)
func.func @max_pool2d(%x: tensor<?x1x4x5xf32>) -> tensor<?x1x2x4xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x5xf32> -> tensor<?x1x4x5xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x5xi8> -> tensor<?x1x4x5xf32>
  %p = dgtorch.max_pool2d %xd {kernel = array<i64: 2, 2>, stride = array<i64: 2, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, ceil_mode = false} : tensor<?x1x4x5xf32> -> tensor<?x1x2x4xf32> loc("pool.py":3:0)
  %pq = dgtorch.quantize_per_tensor %p {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x2x4xf32> -> tensor<?x1x2x4xi8>
  %pd = dgtorch.dequantize_per_tensor %pq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x2x4xi8> -> tensor<?x1x2x4xf32>
  func.return %pd : tensor<?x1x2x4xf32>
}

// -----

// LegalizeMaxPool2d: ceil_mode is fine where every window fits the input.
// CHECK-LABEL: func.func @max_pool2d_ceil_mode_fits
// CHECK:         dgq.max_pool2d %xq {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>} : tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x1x2x2x!dgq.uniform<i8:f32, 0.5:3>>
func.func @max_pool2d_ceil_mode_fits(%x: tensor<?x1x4x4xf32>) -> tensor<?x1x2x2xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x4xf32> -> tensor<?x1x4x4xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x4xi8> -> tensor<?x1x4x4xf32>
  %p = dgtorch.max_pool2d %xd {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, ceil_mode = true} : tensor<?x1x4x4xf32> -> tensor<?x1x2x2xf32>
  %pq = dgtorch.quantize_per_tensor %p {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x2x2xf32> -> tensor<?x1x2x2xi8>
  %pd = dgtorch.dequantize_per_tensor %pq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x2x2xi8> -> tensor<?x1x2x2xf32>
  func.return %pd : tensor<?x1x2x2xf32>
}

// -----

// LegalizeAvgPool2d: torch's [ph, pw] becomes [top, bottom, left, right]; ceil_mode is the result's window count.
// CHECK-LABEL: func.func @avg_pool2d
// CHECK-NEXT:    %xq = dgq.quantize %x
// CHECK-NEXT:    %pq = dgq.avg_pool2d %xq {kernel = array<i64: 3, 2>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 0, 0>, count_include_pad = false} : tensor<?x1x5x5x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x1x3x3x!dgq.uniform<i8:f32, 0.5:3>>
// CHECK-NEXT:    %pd = dgq.dequantize %pq
// LOC-LABEL: func.func @avg_pool2d
// LOC:         dgq.avg_pool2d {{.*}} loc("pool.py":5:0)
func.func @avg_pool2d(%x: tensor<?x1x5x5xf32>) -> tensor<?x1x3x3xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x5x5xf32> -> tensor<?x1x5x5xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x5x5xi8> -> tensor<?x1x5x5xf32>
  %p = dgtorch.avg_pool2d %xd {kernel = array<i64: 3, 2>, stride = array<i64: 2, 2>, padding = array<i64: 1, 0>, ceil_mode = true, count_include_pad = false} : tensor<?x1x5x5xf32> -> tensor<?x1x3x3xf32> loc("pool.py":5:0)
  %pq = dgtorch.quantize_per_tensor %p {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x3x3xf32> -> tensor<?x1x3x3xi8>
  %pd = dgtorch.dequantize_per_tensor %pq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x3x3xi8> -> tensor<?x1x3x3xf32>
  func.return %pd : tensor<?x1x3x3xf32>
}

// -----

// LegalizeAvgPool2d: divisor_override is kept.
// CHECK-LABEL: func.func @avg_pool2d_divisor_override
// CHECK:         dgq.avg_pool2d %xq {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, count_include_pad = true, divisor_override = 3 : i64}
func.func @avg_pool2d_divisor_override(%x: tensor<?x1x4x4xf32>) -> tensor<?x1x2x2xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x4xf32> -> tensor<?x1x4x4xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x4xi8> -> tensor<?x1x4x4xf32>
  %p = dgtorch.avg_pool2d %xd {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, ceil_mode = false, count_include_pad = true, divisor_override = 3 : i64} : tensor<?x1x4x4xf32> -> tensor<?x1x2x2xf32>
  %pq = dgtorch.quantize_per_tensor %p {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x2x2xf32> -> tensor<?x1x2x2xi8>
  %pd = dgtorch.dequantize_per_tensor %pq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x2x2xi8> -> tensor<?x1x2x2xf32>
  func.return %pd : tensor<?x1x2x2xf32>
}

// -----

// LowerAdaptiveAvgPool2d: 4x6 -> 2x3 is an average pool with kernel = stride = [2, 2].
// CHECK-LABEL: func.func @adaptive_avg_pool2d
// CHECK-NEXT:    %xq = dgq.quantize %x
// CHECK-NEXT:    %pq = dgq.avg_pool2d %xq {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, count_include_pad = true} : tensor<?x3x4x6x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x3x2x3x!dgq.uniform<i8:f32, 0.5:3>>
// CHECK-NEXT:    %pd = dgq.dequantize %pq
// LOC-LABEL: func.func @adaptive_avg_pool2d
// LOC:         dgq.avg_pool2d {{.*}} loc("head.py":9:0)
func.func @adaptive_avg_pool2d(%x: tensor<?x3x4x6xf32>) -> tensor<?x3x2x3xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x3x4x6xf32> -> tensor<?x3x4x6xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x3x4x6xi8> -> tensor<?x3x4x6xf32>
  %p = dgtorch.adaptive_avg_pool2d %xd {output_size = array<i64: 2, 3>} : tensor<?x3x4x6xf32> -> tensor<?x3x2x3xf32> loc("head.py":9:0)
  %pq = dgtorch.quantize_per_tensor %p {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x3x2x3xf32> -> tensor<?x3x2x3xi8>
  %pd = dgtorch.dequantize_per_tensor %pq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x3x2x3xi8> -> tensor<?x3x2x3xf32>
  func.return %pd : tensor<?x3x2x3xf32>
}

// -----

// LowerAdaptiveAvgPool2d: the global pool of a ResNet head.
// CHECK-LABEL: func.func @adaptive_avg_pool2d_global
// CHECK:         dgq.avg_pool2d %xq {kernel = array<i64: 7, 7>, stride = array<i64: 7, 7>, pad = array<i64: 0, 0, 0, 0>, count_include_pad = true} : tensor<?x3x7x7x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x3x1x1x!dgq.uniform<i8:f32, 0.5:3>>
func.func @adaptive_avg_pool2d_global(%x: tensor<?x3x7x7xf32>) -> tensor<?x3x1x1xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x3x7x7xf32> -> tensor<?x3x7x7xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x3x7x7xi8> -> tensor<?x3x7x7xf32>
  %p = dgtorch.adaptive_avg_pool2d %xd {output_size = array<i64: 1, 1>} : tensor<?x3x7x7xf32> -> tensor<?x3x1x1xf32>
  %pq = dgtorch.quantize_per_tensor %p {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x3x1x1xf32> -> tensor<?x3x1x1xi8>
  %pd = dgtorch.dequantize_per_tensor %pq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x3x1x1xi8> -> tensor<?x3x1x1xf32>
  func.return %pd : tensor<?x3x1x1xf32>
}

// -----

// LegalizeSoftmax: the negative dim becomes a non-negative axis; the result is on the fixed grid.
// CHECK-LABEL: func.func @softmax
// CHECK-NEXT:    %xq = dgq.quantize %x
// CHECK-NEXT:    %sq = dgq.softmax %xq {axis = 2 : i64} : tensor<?x3x10x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x3x10x!dgq.uniform<i8:f32, 0.00390625:-128>>
// CHECK-NEXT:    %sd = dgq.dequantize %sq
// LOC-LABEL: func.func @softmax
// LOC:         dgq.softmax {{.*}} loc("attn.py":2:0)
func.func @softmax(%x: tensor<?x3x10xf32>) -> tensor<?x3x10xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x3x10xf32> -> tensor<?x3x10xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x3x10xi8> -> tensor<?x3x10xf32>
  %s = dgtorch.softmax %xd {dim = -1 : i64} : tensor<?x3x10xf32> -> tensor<?x3x10xf32> loc("attn.py":2:0)
  %sq = dgtorch.quantize_per_tensor %s {scale = 0.00390625 : f64, zero_point = -128 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x3x10xf32> -> tensor<?x3x10xi8>
  %sd = dgtorch.dequantize_per_tensor %sq {scale = 0.00390625 : f64, zero_point = -128 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x3x10xi8> -> tensor<?x3x10xf32>
  func.return %sd : tensor<?x3x10xf32>
}

// -----

// LegalizeSigmoid.
// CHECK-LABEL: func.func @sigmoid
// CHECK-NEXT:    %xq = dgq.quantize %x
// CHECK-NEXT:    %sq = dgq.sigmoid %xq : tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x4x!dgq.uniform<i8:f32, 0.00390625:-128>>
// CHECK-NEXT:    %sd = dgq.dequantize %sq
func.func @sigmoid(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xf32> -> tensor<?x4xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xi8> -> tensor<?x4xf32>
  %s = dgtorch.sigmoid %xd : tensor<?x4xf32> -> tensor<?x4xf32>
  %sq = dgtorch.quantize_per_tensor %s {scale = 0.00390625 : f64, zero_point = -128 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xf32> -> tensor<?x4xi8>
  %sd = dgtorch.dequantize_per_tensor %sq {scale = 0.00390625 : f64, zero_point = -128 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xi8> -> tensor<?x4xf32>
  func.return %sd : tensor<?x4xf32>
}

// -----

// LegalizePad + FoldPadIntoConv2d: F.pad [left 1, right 2, top 0, bottom 1] adds to the conv's [1, 1, 0, 0].
// CHECK-LABEL: func.func @pad_conv2d
// CHECK-NEXT:    %xq = dgq.quantize %x
// CHECK-NEXT:    %w = dgq.constant
// CHECK-NEXT:    %yq = dgq.conv2d %xq, %w {stride = array<i64: 1, 1>, pad = array<i64: 1, 2, 1, 2>} : (tensor<?x1x3x3x!dgq.uniform<i8:f32, 0.5:3>>, {{.*}}) -> tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.25:-1>>
// CHECK-NEXT:    %yd = dgq.dequantize %yq
// CHECK-NOT:     dgq.pad
// LOC-LABEL: func.func @pad_conv2d
// LOC:         dgq.conv2d {{.*}} loc("conv.py":4:0)
func.func @pad_conv2d(%x: tensor<?x1x3x3xf32>) -> tensor<?x1x4x4xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x3x3xf32> -> tensor<?x1x3x3xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x3x3xi8> -> tensor<?x1x3x3xf32>
  %p = dgtorch.pad %xd {pad = array<i64: 1, 2, 0, 1>, value = 0.0 : f64} : tensor<?x1x3x3xf32> -> tensor<?x1x4x6xf32>
  %pq = dgtorch.quantize_per_tensor %p {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x6xf32> -> tensor<?x1x4x6xi8>
  %pd = dgtorch.dequantize_per_tensor %pq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x6xi8> -> tensor<?x1x4x6xf32>
  %w = dgtorch.constant {value = dense<1> : tensor<1x1x3x3xi8>} : tensor<1x1x3x3xi8>
  %wd = dgtorch.dequantize_per_channel %w {scales = array<f64: 0.25>, zero_points = array<i64: 0>, axis = 0 : i64, quant_min = -127 : i64, quant_max = 127 : i64} : tensor<1x1x3x3xi8> -> tensor<1x1x3x3xf32>
  %y = dgtorch.conv2d %pd, %wd {stride = array<i64: 1, 1>, padding = array<i64: 1, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<?x1x4x6xf32>, tensor<1x1x3x3xf32>) -> tensor<?x1x4x4xf32> loc("conv.py":4:0)
  %yq = dgtorch.quantize_per_tensor %y {scale = 0.25 : f64, zero_point = -1 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x4xf32> -> tensor<?x1x4x4xi8>
  %yd = dgtorch.dequantize_per_tensor %yq {scale = 0.25 : f64, zero_point = -1 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x4xi8> -> tensor<?x1x4x4xf32>
  func.return %yd : tensor<?x1x4x4xf32>
}

// -----

// FoldPadIntoAvgPool2d: a pool counting its own padding counts the folded zeros too.
// CHECK-LABEL: func.func @pad_avg_pool2d_count_include_pad
// CHECK-NEXT:    %xq = dgq.quantize %x
// CHECK-NEXT:    %aq = dgq.avg_pool2d %xq {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, pad = array<i64: 2, 2, 2, 2>, count_include_pad = true} : tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x1x3x3x!dgq.uniform<i8:f32, 0.5:3>>
// CHECK-NEXT:    %ad = dgq.dequantize %aq
func.func @pad_avg_pool2d_count_include_pad(%x: tensor<?x1x4x4xf32>) -> tensor<?x1x3x3xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x4xf32> -> tensor<?x1x4x4xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x4xi8> -> tensor<?x1x4x4xf32>
  %p = dgtorch.pad %xd {pad = array<i64: 1, 1, 1, 1>, value = 0.0 : f64} : tensor<?x1x4x4xf32> -> tensor<?x1x6x6xf32>
  %pq = dgtorch.quantize_per_tensor %p {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x6x6xf32> -> tensor<?x1x6x6xi8>
  %pd = dgtorch.dequantize_per_tensor %pq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x6x6xi8> -> tensor<?x1x6x6xf32>
  %a = dgtorch.avg_pool2d %pd {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, ceil_mode = false, count_include_pad = true} : tensor<?x1x6x6xf32> -> tensor<?x1x3x3xf32>
  %aq = dgtorch.quantize_per_tensor %a {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x3x3xf32> -> tensor<?x1x3x3xi8>
  %ad = dgtorch.dequantize_per_tensor %aq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x3x3xi8> -> tensor<?x1x3x3xf32>
  func.return %ad : tensor<?x1x3x3xf32>
}

// -----

// FoldPadIntoAvgPool2d: without padding of its own, count_include_pad=False becomes True: PyTorch counts the F.pad zeros.
// CHECK-LABEL: func.func @pad_avg_pool2d_exclude_pad
// CHECK-NEXT:    %xq = dgq.quantize %x
// CHECK-NEXT:    %aq = dgq.avg_pool2d %xq {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 2, 0, 0, 1>, count_include_pad = true} : tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x1x3x2x!dgq.uniform<i8:f32, 0.5:3>>
// CHECK-NEXT:    %ad = dgq.dequantize %aq
func.func @pad_avg_pool2d_exclude_pad(%x: tensor<?x1x4x4xf32>) -> tensor<?x1x3x2xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x4xf32> -> tensor<?x1x4x4xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x4xi8> -> tensor<?x1x4x4xf32>
  %p = dgtorch.pad %xd {pad = array<i64: 0, 1, 2, 0>, value = 0.0 : f64} : tensor<?x1x4x4xf32> -> tensor<?x1x6x5xf32>
  %pq = dgtorch.quantize_per_tensor %p {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x6x5xf32> -> tensor<?x1x6x5xi8>
  %pd = dgtorch.dequantize_per_tensor %pq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x6x5xi8> -> tensor<?x1x6x5xf32>
  %a = dgtorch.avg_pool2d %pd {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, ceil_mode = false, count_include_pad = false} : tensor<?x1x6x5xf32> -> tensor<?x1x3x2xf32>
  %aq = dgtorch.quantize_per_tensor %a {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x3x2xf32> -> tensor<?x1x3x2xi8>
  %ad = dgtorch.dequantize_per_tensor %aq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x3x2xi8> -> tensor<?x1x3x2xf32>
  func.return %ad : tensor<?x1x3x2xf32>
}

// -----

// FoldPadIntoAvgPool2d: with a divisor_override the counting rule does not matter.
// CHECK-LABEL: func.func @pad_avg_pool2d_divisor_override
// CHECK-NEXT:    %xq = dgq.quantize %x
// CHECK-NEXT:    %aq = dgq.avg_pool2d %xq {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 2, 2>, count_include_pad = false, divisor_override = 4 : i64} : tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x1x3x4x!dgq.uniform<i8:f32, 0.5:3>>
func.func @pad_avg_pool2d_divisor_override(%x: tensor<?x1x4x4xf32>) -> tensor<?x1x3x4xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x4xf32> -> tensor<?x1x4x4xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x4xi8> -> tensor<?x1x4x4xf32>
  %p = dgtorch.pad %xd {pad = array<i64: 1, 1, 0, 0>, value = 0.0 : f64} : tensor<?x1x4x4xf32> -> tensor<?x1x4x6xf32>
  %pq = dgtorch.quantize_per_tensor %p {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x6xf32> -> tensor<?x1x4x6xi8>
  %pd = dgtorch.dequantize_per_tensor %pq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x6xi8> -> tensor<?x1x4x6xf32>
  %a = dgtorch.avg_pool2d %pd {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, ceil_mode = false, count_include_pad = false, divisor_override = 4 : i64} : tensor<?x1x4x6xf32> -> tensor<?x1x3x4xf32>
  %aq = dgtorch.quantize_per_tensor %a {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x3x4xf32> -> tensor<?x1x3x4xi8>
  %ad = dgtorch.dequantize_per_tensor %aq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x3x4xi8> -> tensor<?x1x3x4xf32>
  func.return %ad : tensor<?x1x3x4xf32>
}

// -----

// LegalizeConcat: inputs on one grid, negative dim.
// CHECK-LABEL: func.func @concat
// CHECK-NEXT:    %aq = dgq.quantize %a
// CHECK-NEXT:    %bq = dgq.quantize %b
// CHECK-NEXT:    %c = dgq.concat %aq, %bq {axis = 1 : i64} : (tensor<?x2x3x3x!dgq.uniform<i8:f32, 0.5:3>>, tensor<?x1x3x3x!dgq.uniform<i8:f32, 0.5:3>>) -> tensor<?x3x3x3x!dgq.uniform<i8:f32, 0.5:3>>
// CHECK-NEXT:    %cd = dgq.dequantize %c
// LOC-LABEL: func.func @concat
// LOC:         dgq.concat {{.*}} loc("cat.py":6:0)
func.func @concat(%a: tensor<?x2x3x3xf32>, %b: tensor<?x1x3x3xf32>) -> tensor<?x3x3x3xf32> {
  %aq = dgtorch.quantize_per_tensor %a {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x3x3xf32> -> tensor<?x2x3x3xi8>
  %ad = dgtorch.dequantize_per_tensor %aq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x3x3xi8> -> tensor<?x2x3x3xf32>
  %bq = dgtorch.quantize_per_tensor %b {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x3x3xf32> -> tensor<?x1x3x3xi8>
  %bd = dgtorch.dequantize_per_tensor %bq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x3x3xi8> -> tensor<?x1x3x3xf32>
  %c = dgtorch.cat %ad, %bd {dim = -3 : i64} : (tensor<?x2x3x3xf32>, tensor<?x1x3x3xf32>) -> tensor<?x3x3x3xf32> loc("cat.py":6:0)
  %cq = dgtorch.quantize_per_tensor %c {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x3x3x3xf32> -> tensor<?x3x3x3xi8>
  %cd = dgtorch.dequantize_per_tensor %cq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x3x3x3xi8> -> tensor<?x3x3x3xf32>
  func.return %cd : tensor<?x3x3x3xf32>
}

// -----

// LegalizeConcat: inputs on other grids are requantized to the grid of the quantize after the cat.
// CHECK-LABEL: func.func @concat_requantizes
// CHECK-NEXT:    %aq = dgq.quantize %a : tensor<?x2xf32> -> tensor<?x2x!dgq.uniform<i8:f32, 0.5:3>>
// CHECK-NEXT:    %bq = dgq.quantize %b : tensor<?x3xf32> -> tensor<?x3x!dgq.uniform<i8:f32, 0.25>>
// CHECK-NEXT:    %[[A:.*]] = dgq.requantize %aq : tensor<?x2x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x2x!dgq.uniform<i8:f32, 0.25>>
// CHECK-NEXT:    %c = dgq.concat %[[A]], %bq {axis = 1 : i64} : (tensor<?x2x!dgq.uniform<i8:f32, 0.25>>, tensor<?x3x!dgq.uniform<i8:f32, 0.25>>) -> tensor<?x5x!dgq.uniform<i8:f32, 0.25>>
// CHECK-NEXT:    %cd = dgq.dequantize %c
func.func @concat_requantizes(%a: tensor<?x2xf32>, %b: tensor<?x3xf32>) -> tensor<?x5xf32> {
  %aq = dgtorch.quantize_per_tensor %a {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xf32> -> tensor<?x2xi8>
  %ad = dgtorch.dequantize_per_tensor %aq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xi8> -> tensor<?x2xf32>
  %bq = dgtorch.quantize_per_tensor %b {scale = 0.25 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x3xf32> -> tensor<?x3xi8>
  %bd = dgtorch.dequantize_per_tensor %bq {scale = 0.25 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x3xi8> -> tensor<?x3xf32>
  %c = dgtorch.cat %ad, %bd {dim = 1 : i64} : (tensor<?x2xf32>, tensor<?x3xf32>) -> tensor<?x5xf32>
  %cq = dgtorch.quantize_per_tensor %c {scale = 0.25 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x5xf32> -> tensor<?x5xi8>
  %cd = dgtorch.dequantize_per_tensor %cq {scale = 0.25 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x5xi8> -> tensor<?x5xf32>
  func.return %cd : tensor<?x5xf32>
}

// -----

// LegalizeResizeNearest, both modes.
// CHECK-LABEL: func.func @resize_nearest
// CHECK-NEXT:    %xq = dgq.quantize %x
// CHECK-NEXT:    %u = dgq.resize_nearest %xq {mode = "nearest"} : tensor<?x2x3x3x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x2x6x9x!dgq.uniform<i8:f32, 0.5:3>>
// CHECK-NEXT:    %ud = dgq.dequantize %u
// CHECK-NEXT:    %e = dgq.resize_nearest %xq {mode = "nearest-exact"} : tensor<?x2x3x3x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x2x5x4x!dgq.uniform<i8:f32, 0.5:3>>
// CHECK-NEXT:    %ed = dgq.dequantize %e
func.func @resize_nearest(%x: tensor<?x2x3x3xf32>) -> (tensor<?x2x6x9xf32>, tensor<?x2x5x4xf32>) {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x3x3xf32> -> tensor<?x2x3x3xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x3x3xi8> -> tensor<?x2x3x3xf32>
  %u = dgtorch.upsample_nearest2d %xd {mode = "nearest"} : tensor<?x2x3x3xf32> -> tensor<?x2x6x9xf32>
  %uq = dgtorch.quantize_per_tensor %u {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x6x9xf32> -> tensor<?x2x6x9xi8>
  %ud = dgtorch.dequantize_per_tensor %uq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x6x9xi8> -> tensor<?x2x6x9xf32>
  %e = dgtorch.upsample_nearest2d %xd {mode = "nearest-exact"} : tensor<?x2x3x3xf32> -> tensor<?x2x5x4xf32>
  %eq = dgtorch.quantize_per_tensor %e {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x5x4xf32> -> tensor<?x2x5x4xi8>
  %ed = dgtorch.dequantize_per_tensor %eq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x5x4xi8> -> tensor<?x2x5x4xf32>
  func.return %ud, %ed : tensor<?x2x6x9xf32>, tensor<?x2x5x4xf32>
}

// -----

// LegalizeChannelsLastFlatten: dg.Flatten, permute [0, 2, 3, 1] then flatten.
// CHECK-LABEL: func.func @channels_last_flatten
// CHECK-NEXT:    %xq = dgq.quantize %x
// CHECK-NEXT:    %f = dgq.flatten_channels_last %xq : tensor<?x2x3x4x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x24x!dgq.uniform<i8:f32, 0.5:3>>
// CHECK-NEXT:    %fd = dgq.dequantize %f
// CHECK-NEXT:    func.return %fd
// LOC-LABEL: func.func @channels_last_flatten
// LOC:         dgq.flatten_channels_last {{.*}} loc("model.py":12:0)
func.func @channels_last_flatten(%x: tensor<?x2x3x4xf32>) -> tensor<?x24xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x3x4xf32> -> tensor<?x2x3x4xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x3x4xi8> -> tensor<?x2x3x4xf32>
  %t = dgtorch.permute %xd {dims = array<i64: 0, 2, 3, 1>} : tensor<?x2x3x4xf32> -> tensor<?x3x4x2xf32>
  %f = dgtorch.flatten %t {start_dim = 1 : i64, end_dim = 3 : i64} : tensor<?x3x4x2xf32> -> tensor<?x24xf32> loc("model.py":12:0)
  %fq = dgtorch.quantize_per_tensor %f {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x24xf32> -> tensor<?x24xi8>
  %fd = dgtorch.dequantize_per_tensor %fq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x24xi8> -> tensor<?x24xf32>
  func.return %fd : tensor<?x24xf32>
}

// -----

// LegalizeChannelsLastFlatten: the same with a reshape and torch's negative dims.
// CHECK-LABEL: func.func @channels_last_reshape
// CHECK-NEXT:    %xq = dgq.quantize %x
// CHECK-NEXT:    %f = dgq.flatten_channels_last %xq : tensor<?x2x3x4x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x24x!dgq.uniform<i8:f32, 0.5:3>>
// CHECK-NEXT:    dgq.dequantize %f
func.func @channels_last_reshape(%x: tensor<?x2x3x4xf32>) -> tensor<?x24xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x3x4xf32> -> tensor<?x2x3x4xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x3x4xi8> -> tensor<?x2x3x4xf32>
  %t = dgtorch.permute %xd {dims = array<i64: 0, -2, -1, 1>} : tensor<?x2x3x4xf32> -> tensor<?x3x4x2xf32>
  %f = dgtorch.reshape %t : tensor<?x3x4x2xf32> -> tensor<?x24xf32>
  func.return %f : tensor<?x24xf32>
}

// -----

// FoldBatchNormIntoLinear: a = gamma / sqrt(var + eps) = [1, -1]. Row 0 keeps its integers and scale;
// row 1 is negated. Bias: 1 * (4 * 0.25 - 0) + 1 = 2 on grid 0.5 * 0.5 -> 8; -1 * (-8 * 0.125 - 1) + 0 = 2
// on grid 0.5 * 0.25 -> 16. A relu after the batch norm fuses into the folded linear.
// CHECK-LABEL: func.func @batch_norm_after_linear
// CHECK-NEXT:    %xq = dgq.quantize %x
// CHECK-NEXT:    %w = dgq.constant {value = dense<{{\[}}[1, 2], [-3, -4]]> : tensor<2x2xi8>} : tensor<2x2x!dgq.uniform<i8<-127:127>:f32:0, {0.5,0.25}>>
// CHECK-NEXT:    %b = dgq.constant {value = dense<[8, 16]> : tensor<2xi32>} : tensor<2x!dgq.uniform<i32:f32:0, {0.25,0.125}>>
// CHECK-NEXT:    %rq = dgq.linear %xq, %w, %b {fused_activation = "relu"} : {{.*}} -> tensor<?x2x!dgq.uniform<i8:f32, 0.25:-128>>
// CHECK-NEXT:    %rd = dgq.dequantize %rq
// CHECK-NOT:     dgtorch.
// LOC-LABEL: func.func @batch_norm_after_linear
// LOC:         dgq.linear {{.*}} loc("mlp.py":3:0)
func.func @batch_norm_after_linear(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xf32> -> tensor<?x2xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xi8> -> tensor<?x2xf32>
  %w = dgtorch.constant {value = dense<[[1, 2], [3, 4]]> : tensor<2x2xi8>} : tensor<2x2xi8>
  %wd = dgtorch.dequantize_per_channel %w {scales = array<f64: 0.5, 0.25>, zero_points = array<i64: 0, 0>, axis = 0 : i64, quant_min = -127 : i64, quant_max = 127 : i64} : tensor<2x2xi8> -> tensor<2x2xf32>
  %b = dgtorch.constant {value = dense<[4, -8]> : tensor<2xi32>} : tensor<2xi32>
  %bd = dgtorch.dequantize_per_channel %b {scales = array<f64: 0.25, 0.125>, zero_points = array<i64: 0, 0>, axis = 0 : i64, quant_min = -2147483648 : i64, quant_max = 2147483647 : i64} : tensor<2xi32> -> tensor<2xf32>
  %y = dgtorch.linear %xd, %wd, %bd : (tensor<?x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<?x2xf32> loc("mlp.py":3:0)
  %gamma = dgtorch.constant {value = dense<[2.0, -1.0]> : tensor<2xf32>} : tensor<2xf32>
  %beta = dgtorch.constant {value = dense<[1.0, 0.0]> : tensor<2xf32>} : tensor<2xf32>
  %mean = dgtorch.constant {value = dense<[0.0, 1.0]> : tensor<2xf32>} : tensor<2xf32>
  %var = dgtorch.constant {value = dense<[3.0, 0.0]> : tensor<2xf32>} : tensor<2xf32>
  %n = dgtorch.batch_norm %y, %gamma, %beta, %mean, %var {eps = 1.0 : f64} : (tensor<?x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2xf32> loc("mlp.py":4:0)
  %r = dgtorch.relu %n : tensor<?x2xf32> -> tensor<?x2xf32>
  %rq = dgtorch.quantize_per_tensor %r {scale = 0.25 : f64, zero_point = -128 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xf32> -> tensor<?x2xi8>
  %rd = dgtorch.dequantize_per_tensor %rq {scale = 0.25 : f64, zero_point = -128 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xi8> -> tensor<?x2xf32>
  func.return %rd : tensor<?x2xf32>
}

// -----

// FoldBatchNormIntoLinear without a bias: the folded bias is beta - a * mean = [1 - 0, 0 + 1] -> [4, 8].
// CHECK-LABEL: func.func @batch_norm_after_linear_without_bias
// CHECK-NEXT:    %xq = dgq.quantize %x
// CHECK-NEXT:    %w = dgq.constant {value = dense<{{\[}}[1, 2], [-3, -4]]> : tensor<2x2xi8>}
// CHECK-NEXT:    %[[B:.*]] = dgq.constant {value = dense<[4, 8]> : tensor<2xi32>} : tensor<2x!dgq.uniform<i32:f32:0, {0.25,0.125}>>
// CHECK-NEXT:    %nq = dgq.linear %xq, %w, %[[B]] : {{.*}} -> tensor<?x2x!dgq.uniform<i8:f32, 0.25>>
func.func @batch_norm_after_linear_without_bias(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xf32> -> tensor<?x2xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xi8> -> tensor<?x2xf32>
  %w = dgtorch.constant {value = dense<[[1, 2], [3, 4]]> : tensor<2x2xi8>} : tensor<2x2xi8>
  %wd = dgtorch.dequantize_per_channel %w {scales = array<f64: 0.5, 0.25>, zero_points = array<i64: 0, 0>, axis = 0 : i64, quant_min = -127 : i64, quant_max = 127 : i64} : tensor<2x2xi8> -> tensor<2x2xf32>
  %y = dgtorch.linear %xd, %wd : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
  %gamma = dgtorch.constant {value = dense<[2.0, -1.0]> : tensor<2xf32>} : tensor<2xf32>
  %beta = dgtorch.constant {value = dense<[1.0, 0.0]> : tensor<2xf32>} : tensor<2xf32>
  %mean = dgtorch.constant {value = dense<[0.0, 1.0]> : tensor<2xf32>} : tensor<2xf32>
  %var = dgtorch.constant {value = dense<[3.0, 0.0]> : tensor<2xf32>} : tensor<2xf32>
  %n = dgtorch.batch_norm %y, %gamma, %beta, %mean, %var {eps = 1.0 : f64} : (tensor<?x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2xf32>
  %nq = dgtorch.quantize_per_tensor %n {scale = 0.25 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xf32> -> tensor<?x2xi8>
  %nd = dgtorch.dequantize_per_tensor %nq {scale = 0.25 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xi8> -> tensor<?x2xf32>
  func.return %nd : tensor<?x2xf32>
}

// -----

// LegalizeTranspose: the swap of two axes becomes a permutation; the grid is shared.
// CHECK-LABEL: func.func @transpose
// CHECK-NEXT:    %xq = dgq.quantize %x
// CHECK-NEXT:    %t = dgq.transpose %xq {perm = array<i64: 0, 2, 1>} : tensor<?x5x8x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x8x5x!dgq.uniform<i8:f32, 0.5:3>>
// CHECK-NEXT:    %td = dgq.dequantize %t
// CHECK-NEXT:    func.return %td
func.func @transpose(%x: tensor<?x5x8xf32>) -> tensor<?x8x5xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x5x8xf32> -> tensor<?x5x8xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x5x8xi8> -> tensor<?x5x8xf32>
  %t = dgtorch.transpose %xd {dim0 = -1 : i64, dim1 = 1 : i64} : tensor<?x5x8xf32> -> tensor<?x8x5xf32>
  %tq = dgtorch.quantize_per_tensor %t {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x8x5xf32> -> tensor<?x8x5xi8>
  %td = dgtorch.dequantize_per_tensor %tq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x8x5xi8> -> tensor<?x8x5xf32>
  func.return %td : tensor<?x8x5xf32>
}

// -----

// LegalizeSlice: a step-1 slice of a sequence tensor keeps its range and grid.
// CHECK-LABEL: func.func @slice
// CHECK-NEXT:    %xq = dgq.quantize %x
// CHECK-NEXT:    %s = dgq.slice %xq {axis = 2 : i64, start = 2 : i64, end = 6 : i64} : tensor<?x5x8x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x5x4x!dgq.uniform<i8:f32, 0.5:3>>
// CHECK-NEXT:    %sd = dgq.dequantize %s
// CHECK-NEXT:    func.return %sd
func.func @slice(%x: tensor<?x5x8xf32>) -> tensor<?x5x4xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x5x8xf32> -> tensor<?x5x8xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x5x8xi8> -> tensor<?x5x8xf32>
  %s = dgtorch.slice %xd {dim = 2 : i64, start = 2 : i64, end = 6 : i64, step = 1 : i64} : tensor<?x5x8xf32> -> tensor<?x5x4xf32>
  %sq = dgtorch.quantize_per_tensor %s {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x5x4xf32> -> tensor<?x5x4xi8>
  %sd = dgtorch.dequantize_per_tensor %sq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x5x4xi8> -> tensor<?x5x4xf32>
  func.return %sd : tensor<?x5x4xf32>
}

// -----

// LegalizeMulConstant: activation x dequantized constant; each keeps its own grid.
// CHECK-LABEL: func.func @mul_constant
// CHECK-NEXT:    %xq = dgq.quantize %x : tensor<?x2x4xf32> -> tensor<?x2x4x!dgq.uniform<i8:f32, 0.5:3>>
// CHECK-NEXT:    %c = dgq.constant {value = dense<{{.*}}> : tensor<2x4xi8>} : tensor<2x4x!dgq.uniform<i8<-127:127>:f32, 0.0078125>>
// CHECK-NEXT:    %mq = dgq.mul_constant %xq, %c : (tensor<?x2x4x!dgq.uniform<i8:f32, 0.5:3>>, tensor<2x4x!dgq.uniform<i8<-127:127>:f32, 0.0078125>>) -> tensor<?x2x4x!dgq.uniform<i8:f32, 0.25:-1>>
// CHECK-NEXT:    %md = dgq.dequantize %mq
// CHECK-NOT:     dgtorch.
// LOC-LABEL: func.func @mul_constant
// LOC:         dgq.mul_constant {{.*}} loc("rope.py":7:0)
func.func @mul_constant(%x: tensor<?x2x4xf32>) -> tensor<?x2x4xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x4xf32> -> tensor<?x2x4xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x4xi8> -> tensor<?x2x4xf32>
  %c = dgtorch.constant {value = dense<[[127, 64, 0, -64], [-127, 1, 2, 3]]> : tensor<2x4xi8>} : tensor<2x4xi8>
  %cd = dgtorch.dequantize_per_tensor %c {scale = 0.0078125 : f64, zero_point = 0 : i64, quant_min = -127 : i64, quant_max = 127 : i64} : tensor<2x4xi8> -> tensor<2x4xf32>
  %m = dgtorch.mul %xd, %cd : (tensor<?x2x4xf32>, tensor<2x4xf32>) -> tensor<?x2x4xf32> loc("rope.py":7:0)
  %mq = dgtorch.quantize_per_tensor %m {scale = 0.25 : f64, zero_point = -1 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x4xf32> -> tensor<?x2x4xi8>
  %md = dgtorch.dequantize_per_tensor %mq {scale = 0.25 : f64, zero_point = -1 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x4xi8> -> tensor<?x2x4xf32>
  func.return %md : tensor<?x2x4xf32>
}

// -----

// FoldScaleIntoMatmul: the score scale becomes the factor of dgq.matmul, not an op.
// CHECK-LABEL: func.func @matmul_scale
// CHECK:         %sq = dgq.matmul %aq, %bq {factor = 2.500000e-01 : f64} : (tensor<?x2x4x!dgq.uniform<i8:f32, 0.5:3>>, tensor<?x4x3x!dgq.uniform<i8:f32, 0.25:-2>>) -> tensor<?x2x3x!dgq.uniform<i8:f32, 0.125:1>>
// CHECK-NOT:     dgtorch.
// CHECK-NOT:     mul_scalar
func.func @matmul_scale(%a: tensor<?x2x4xf32>, %b: tensor<?x4x3xf32>) -> tensor<?x2x3xf32> {
  %aq = dgtorch.quantize_per_tensor %a {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x4xf32> -> tensor<?x2x4xi8>
  %ad = dgtorch.dequantize_per_tensor %aq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x4xi8> -> tensor<?x2x4xf32>
  %bq = dgtorch.quantize_per_tensor %b {scale = 0.25 : f64, zero_point = -2 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4x3xf32> -> tensor<?x4x3xi8>
  %bd = dgtorch.dequantize_per_tensor %bq {scale = 0.25 : f64, zero_point = -2 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4x3xi8> -> tensor<?x4x3xf32>
  %m = dgtorch.matmul %ad, %bd : (tensor<?x2x4xf32>, tensor<?x4x3xf32>) -> tensor<?x2x3xf32>
  %s = dgtorch.mul_scalar %m {factor = 0.25 : f64} : tensor<?x2x3xf32> -> tensor<?x2x3xf32>
  %sq = dgtorch.quantize_per_tensor %s {scale = 0.125 : f64, zero_point = 1 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x3xf32> -> tensor<?x2x3xi8>
  %sd = dgtorch.dequantize_per_tensor %sq {scale = 0.125 : f64, zero_point = 1 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x3xi8> -> tensor<?x2x3xf32>
  func.return %sd : tensor<?x2x3xf32>
}

// -----

// LegalizeMatmul: no scale, factor 1 (the default, not printed).
// CHECK-LABEL: func.func @matmul
// CHECK:         %mq = dgq.matmul %aq, %bq : (tensor<?x2x4x!dgq.uniform<i8:f32, 0.5:3>>, tensor<?x4x3x!dgq.uniform<i8:f32, 0.25:-2>>) -> tensor<?x2x3x!dgq.uniform<i8:f32, 0.125:1>>
func.func @matmul(%a: tensor<?x2x4xf32>, %b: tensor<?x4x3xf32>) -> tensor<?x2x3xf32> {
  %aq = dgtorch.quantize_per_tensor %a {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x4xf32> -> tensor<?x2x4xi8>
  %ad = dgtorch.dequantize_per_tensor %aq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x4xi8> -> tensor<?x2x4xf32>
  %bq = dgtorch.quantize_per_tensor %b {scale = 0.25 : f64, zero_point = -2 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4x3xf32> -> tensor<?x4x3xi8>
  %bd = dgtorch.dequantize_per_tensor %bq {scale = 0.25 : f64, zero_point = -2 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4x3xi8> -> tensor<?x4x3xf32>
  %m = dgtorch.matmul %ad, %bd : (tensor<?x2x4xf32>, tensor<?x4x3xf32>) -> tensor<?x2x3xf32>
  %mq = dgtorch.quantize_per_tensor %m {scale = 0.125 : f64, zero_point = 1 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x3xf32> -> tensor<?x2x3xi8>
  %md = dgtorch.dequantize_per_tensor %mq {scale = 0.125 : f64, zero_point = 1 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x3xi8> -> tensor<?x2x3xf32>
  func.return %md : tensor<?x2x3xf32>
}

// -----

// LegalizeNorm: the body of a dg.Norm (layer, with bias) and its float parameters become one
// dgq.norm holding gamma and beta; the constants are gone.
// CHECK-LABEL: func.func @norm_layer
// CHECK-NEXT:    %xq = dgq.quantize %x
// CHECK-NEXT:    %nq = dgq.norm %xq {kind = "layer", eps = 1.000000e-05 : f64, gamma = array<f64: 1.000000e+00, 5.000000e-01, -2.000000e+00, 1.000000e+00>, beta = array<f64: 0.000000e+00, 2.500000e-01, 0.000000e+00, -1.000000e+00>} : tensor<?x3x4x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x3x4x!dgq.uniform<i8:f32, 0.03125:-2>>
// CHECK-NEXT:    %nd = dgq.dequantize %nq
// CHECK-NEXT:    func.return %nd
// LOC-LABEL: func.func @norm_layer
// LOC:         dgq.norm {{.*}} loc("block.py":7:0)
func.func @norm_layer(%x: tensor<?x3x4xf32>) -> tensor<?x3x4xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x3x4xf32> -> tensor<?x3x4xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x3x4xi8> -> tensor<?x3x4xf32>
  %w = dgtorch.constant {value = dense<[1.0, 0.5, -2.0, 1.0]> : tensor<4xf32>} : tensor<4xf32>
  %b = dgtorch.constant {value = dense<[0.0, 0.25, 0.0, -1.0]> : tensor<4xf32>} : tensor<4xf32>
  %n = dgtorch.norm %xd, %w, %b {kind = "layer", eps = 1.0e-05 : f64} : (tensor<?x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x3x4xf32> loc("block.py":7:0)
  %nq = dgtorch.quantize_per_tensor %n {scale = 0.03125 : f64, zero_point = -2 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x3x4xf32> -> tensor<?x3x4xi8>
  %nd = dgtorch.dequantize_per_tensor %nq {scale = 0.03125 : f64, zero_point = -2 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x3x4xi8> -> tensor<?x3x4xf32>
  func.return %nd : tensor<?x3x4xf32>
}

// -----

// LegalizeNorm: an rms norm has no bias operand; beta is zero.
// CHECK-LABEL: func.func @norm_rms
// CHECK-NEXT:    %xq = dgq.quantize %x
// CHECK-NEXT:    %nq = dgq.norm %xq {kind = "rms", eps = 1.000000e-06 : f64, gamma = array<f64: 2.000000e+00, 1.000000e+00>, beta = array<f64: 0.000000e+00, 0.000000e+00>} : tensor<?x2x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x2x!dgq.uniform<i8:f32, 0.03125:-2>>
// CHECK-NEXT:    %nd = dgq.dequantize %nq
func.func @norm_rms(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xf32> -> tensor<?x2xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xi8> -> tensor<?x2xf32>
  %w = dgtorch.constant {value = dense<[2.0, 1.0]> : tensor<2xf32>} : tensor<2xf32>
  %n = dgtorch.norm %xd, %w {kind = "rms", eps = 1.0e-06 : f64} : (tensor<?x2xf32>, tensor<2xf32>) -> tensor<?x2xf32>
  %nq = dgtorch.quantize_per_tensor %n {scale = 0.03125 : f64, zero_point = -2 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xf32> -> tensor<?x2xi8>
  %nd = dgtorch.dequantize_per_tensor %nq {scale = 0.03125 : f64, zero_point = -2 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xi8> -> tensor<?x2xf32>
  func.return %nd : tensor<?x2xf32>
}
