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
