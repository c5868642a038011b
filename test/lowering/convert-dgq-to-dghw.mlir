// Every pattern of convert-dgq-to-dghw. Scales are mostly powers of two, so each rescale
// factor is 2^k and encodes as multiplier 2^30 = 1073741824, shift 30 - k.
// RUN: dg-opt %s --split-input-file -p convert-dgq-to-dghw | filecheck %s
// RUN: dg-opt %s --split-input-file -p convert-dgq-to-dghw --print-debuginfo | filecheck %s --check-prefix=LOC

// LowerGraphInput + LowerGraphOutput: i8 in torch layout at the boundary, NHWC inside.
// CHECK-LABEL: func.func @boundary_rank4
// CHECK-SAME:    (%x: tensor<?x2x1x3xi8> {dghw.scale = 5.000000e-01 : f64, dghw.zero_point = 3 : i32})
// CHECK-SAME:    -> (tensor<?x2x1x3xi8> {dghw.scale = 1.250000e-01 : f64, dghw.zero_point = -7 : i32})
// CHECK-SAME:    attributes {dg.output_structure = "single"}
// CHECK-NEXT:    %0 = dghw.transpose %x {perm = array<i64: 0, 2, 3, 1>} : tensor<?x2x1x3xi8> -> tensor<?x1x3x2xi8>
// CHECK-NEXT:    %1 = dghw.rescale %0 {{.*}} : tensor<?x1x3x2xi8> -> tensor<?x1x3x2xi8>
// CHECK-NEXT:    %yd = dghw.transpose %1 {perm = array<i64: 0, 3, 1, 2>} : tensor<?x1x3x2xi8> -> tensor<?x2x1x3xi8>
// CHECK-NEXT:    func.return %yd : tensor<?x2x1x3xi8>
func.func @boundary_rank4(%x: tensor<?x2x1x3xf32>) -> tensor<?x2x1x3xf32> attributes {dg.output_structure = "single"} {
  %xq = dgq.quantize %x : tensor<?x2x1x3xf32> -> tensor<?x2x1x3x!dgq.uniform<i8:f32, 0.5:3>>
  %yq = dgq.requantize %xq : tensor<?x2x1x3x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x2x1x3x!dgq.uniform<i8:f32, 0.125:-7>>
  %yd = dgq.dequantize %yq : tensor<?x2x1x3x!dgq.uniform<i8:f32, 0.125:-7>> -> tensor<?x2x1x3xf32>
  func.return %yd : tensor<?x2x1x3xf32>
}

// -----

// FoldTransposeOfTranspose: the boundary's NCHW -> NHWC -> NCHW round trip disappears.
// CHECK-LABEL: func.func @transpose_round_trip
// CHECK-NEXT:    func.return %x : tensor<?x2x1x3xi8>
func.func @transpose_round_trip(%x: tensor<?x2x1x3xf32>) -> tensor<?x2x1x3xf32> {
  %xq = dgq.quantize %x : tensor<?x2x1x3xf32> -> tensor<?x2x1x3x!dgq.uniform<i8:f32, 0.5:3>>
  %xd = dgq.dequantize %xq : tensor<?x2x1x3x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x2x1x3xf32>
  func.return %xd : tensor<?x2x1x3xf32>
}

// -----

// Other ranks keep their layout; every argument and result gets its own attributes.
// CHECK-LABEL: func.func @boundary_rank2
// CHECK-SAME:    (%a: tensor<?x4xi8> {dghw.scale = 5.000000e-01 : f64, dghw.zero_point = 3 : i32},
// CHECK-SAME:     %b: tensor<?x4xi8> {dghw.scale = 2.500000e-01 : f64, dghw.zero_point = -2 : i32})
// CHECK-SAME:    -> (tensor<?x4xi8> {dghw.scale = 2.500000e-01 : f64, dghw.zero_point = -2 : i32},
// CHECK-SAME:        tensor<?x4xi8> {dghw.scale = 5.000000e-01 : f64, dghw.zero_point = 3 : i32})
// CHECK-NEXT:    func.return %b, %a : tensor<?x4xi8>, tensor<?x4xi8>
func.func @boundary_rank2(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %aq = dgq.quantize %a : tensor<?x4xf32> -> tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>>
  %bq = dgq.quantize %b : tensor<?x4xf32> -> tensor<?x4x!dgq.uniform<i8:f32, 0.25:-2>>
  %bd = dgq.dequantize %bq : tensor<?x4x!dgq.uniform<i8:f32, 0.25:-2>> -> tensor<?x4xf32>
  %ad = dgq.dequantize %aq : tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x4xf32>
  func.return %bd, %ad : tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// LowerConv2d: OIHW -> OHWI weight bytes, per-channel rescale from 0.5 * [0.25, 0.125] to 0.25.
// CHECK-LABEL: func.func @conv2d
// CHECK-NEXT:    %0 = dghw.transpose %x {perm = array<i64: 0, 2, 3, 1>} : tensor<?x2x3x3xi8> -> tensor<?x3x3x2xi8>
// CHECK-NEXT:    %1 = dghw.constant {value = dense<{{\[\[\[\[}}1, 3], [2, 4]]], {{\[\[\[}}5, 7], [6, 8]]]]> : tensor<2x1x2x2xi8>} : tensor<2x1x2x2xi8>
// CHECK-NEXT:    %2 = dghw.constant {value = dense<[8, -8]> : tensor<2xi32>} : tensor<2xi32>
// CHECK-NEXT:    %3 = dghw.conv2d %0, %1, %2 {stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 1, 0>, input_zp = 3 : i32, weight_zp = 0 : i32} : (tensor<?x3x3x2xi8>, tensor<2x1x2x2xi8>, tensor<2xi32>) -> tensor<?x3x3x2xi32>
// CHECK-NEXT:    %4 = dghw.rescale %3 {multiplier = array<i32: 1073741824, 1073741824>, shift = array<i32: 31, 32>, input_zp = 0 : i32, output_zp = -1 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32} : tensor<?x3x3x2xi32> -> tensor<?x3x3x2xi8>
// CHECK-NEXT:    %yd = dghw.transpose %4 {perm = array<i64: 0, 3, 1, 2>} : tensor<?x3x3x2xi8> -> tensor<?x2x3x3xi8>
// CHECK-NEXT:    func.return %yd
// LOC-LABEL: func.func @conv2d
// LOC:         dghw.constant {{.*}} loc("conv.py":4:0)
// LOC:         dghw.conv2d {{.*}} loc("conv.py":4:0)
// LOC:         dghw.rescale {{.*}} loc("conv.py":4:0)
func.func @conv2d(%x: tensor<?x2x3x3xf32>) -> tensor<?x2x3x3xf32> {
  %xq = dgq.quantize %x : tensor<?x2x3x3xf32> -> tensor<?x2x3x3x!dgq.uniform<i8:f32, 0.5:3>>
  %w = dgq.constant {value = dense<[[[[1, 2]], [[3, 4]]], [[[5, 6]], [[7, 8]]]]> : tensor<2x2x1x2xi8>} : tensor<2x2x1x2x!dgq.uniform<i8<-127:127>:f32:0, {0.25,0.125}>>
  %b = dgq.constant {value = dense<[8, -8]> : tensor<2xi32>} : tensor<2x!dgq.uniform<i32:f32:0, {0.125,0.0625}>>
  %yq = dgq.conv2d %xq, %w, %b {stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 1, 0>} : (tensor<?x2x3x3x!dgq.uniform<i8:f32, 0.5:3>>, tensor<2x2x1x2x!dgq.uniform<i8<-127:127>:f32:0, {0.25,0.125}>>, tensor<2x!dgq.uniform<i32:f32:0, {0.125,0.0625}>>) -> tensor<?x2x3x3x!dgq.uniform<i8:f32, 0.25:-1>> loc("conv.py":4:0)
  %yd = dgq.dequantize %yq : tensor<?x2x3x3x!dgq.uniform<i8:f32, 0.25:-1>> -> tensor<?x2x3x3xf32>
  func.return %yd : tensor<?x2x3x3xf32>
}

// -----

// Without a bias the bias is zeros; relu clamps at the output zero point. Factors
// 0.5 * [0.25, 0.125] / 0.3 = 5/12, 5/24: nearest 31-bit multiplier 1789569707, shifts 32, 33.
// CHECK-LABEL: func.func @conv2d_relu_no_bias
// CHECK:         %[[BIAS:.*]] = dghw.constant {value = dense<0> : tensor<2xi32>} : tensor<2xi32>
// CHECK-NEXT:    %[[ACC:.*]] = dghw.conv2d %{{.*}}, %{{.*}}, %[[BIAS]] {stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>, input_zp = 3 : i32, weight_zp = 0 : i32} : (tensor<?x3x3x2xi8>, tensor<2x1x2x2xi8>, tensor<2xi32>) -> tensor<?x3x2x2xi32>
// CHECK-NEXT:    dghw.rescale %[[ACC]] {multiplier = array<i32: 1789569707, 1789569707>, shift = array<i32: 32, 33>, input_zp = 0 : i32, output_zp = -5 : i32, clamp_min = -5 : i32, clamp_max = 127 : i32}
func.func @conv2d_relu_no_bias(%x: tensor<?x2x3x3xf32>) -> tensor<?x2x3x2xf32> {
  %xq = dgq.quantize %x : tensor<?x2x3x3xf32> -> tensor<?x2x3x3x!dgq.uniform<i8:f32, 0.5:3>>
  %w = dgq.constant {value = dense<[[[[1, 2]], [[3, 4]]], [[[5, 6]], [[7, 8]]]]> : tensor<2x2x1x2xi8>} : tensor<2x2x1x2x!dgq.uniform<i8<-127:127>:f32:0, {0.25,0.125}>>
  %yq = dgq.conv2d %xq, %w {stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>, fused_activation = "relu"} : (tensor<?x2x3x3x!dgq.uniform<i8:f32, 0.5:3>>, tensor<2x2x1x2x!dgq.uniform<i8<-127:127>:f32:0, {0.25,0.125}>>) -> tensor<?x2x3x2x!dgq.uniform<i8:f32, 0.3:-5>>
  %yd = dgq.dequantize %yq : tensor<?x2x3x2x!dgq.uniform<i8:f32, 0.3:-5>> -> tensor<?x2x3x2xf32>
  func.return %yd : tensor<?x2x3x2xf32>
}

// -----

// A per-tensor weight scale applies to every output channel.
// CHECK-LABEL: func.func @conv2d_per_tensor_weight
// CHECK:         dghw.rescale %{{.*}} {multiplier = array<i32: 1073741824, 1073741824>, shift = array<i32: 31, 31>,
func.func @conv2d_per_tensor_weight(%x: tensor<?x2x3x3xf32>) -> tensor<?x2x3x2xf32> {
  %xq = dgq.quantize %x : tensor<?x2x3x3xf32> -> tensor<?x2x3x3x!dgq.uniform<i8:f32, 0.5:3>>
  %w = dgq.constant {value = dense<[[[[1, 2]], [[3, 4]]], [[[5, 6]], [[7, 8]]]]> : tensor<2x2x1x2xi8>} : tensor<2x2x1x2x!dgq.uniform<i8<-127:127>:f32, 0.25>>
  %yq = dgq.conv2d %xq, %w {stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>} : (tensor<?x2x3x3x!dgq.uniform<i8:f32, 0.5:3>>, tensor<2x2x1x2x!dgq.uniform<i8<-127:127>:f32, 0.25>>) -> tensor<?x2x3x2x!dgq.uniform<i8:f32, 0.25:-1>>
  %yd = dgq.dequantize %yq : tensor<?x2x3x2x!dgq.uniform<i8:f32, 0.25:-1>> -> tensor<?x2x3x2xf32>
  func.return %yd : tensor<?x2x3x2xf32>
}

// -----

// LowerLinear: the [out, in] weight is used as it is.
// CHECK-LABEL: func.func @linear
// CHECK-NEXT:    %0 = dghw.constant {value = dense<{{\[}}[1, 2, 3], [-4, -5, -6]]> : tensor<2x3xi8>} : tensor<2x3xi8>
// CHECK-NEXT:    %1 = dghw.constant {value = dense<[3, 4]> : tensor<2xi32>} : tensor<2xi32>
// CHECK-NEXT:    %2 = dghw.fully_connected %x, %0, %1 {input_zp = 3 : i32, weight_zp = 0 : i32} : (tensor<?x3xi8>, tensor<2x3xi8>, tensor<2xi32>) -> tensor<?x2xi32>
// CHECK-NEXT:    %yd = dghw.rescale %2 {multiplier = array<i32: 1073741824, 1073741824>, shift = array<i32: 31, 32>, input_zp = 0 : i32, output_zp = -1 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32} : tensor<?x2xi32> -> tensor<?x2xi8>
// CHECK-NEXT:    func.return %yd
func.func @linear(%x: tensor<?x3xf32>) -> tensor<?x2xf32> {
  %xq = dgq.quantize %x : tensor<?x3xf32> -> tensor<?x3x!dgq.uniform<i8:f32, 0.5:3>>
  %w = dgq.constant {value = dense<[[1, 2, 3], [-4, -5, -6]]> : tensor<2x3xi8>} : tensor<2x3x!dgq.uniform<i8<-127:127>:f32:0, {0.25,0.125}>>
  %b = dgq.constant {value = dense<[3, 4]> : tensor<2xi32>} : tensor<2x!dgq.uniform<i32:f32:0, {0.125,0.0625}>>
  %yq = dgq.linear %xq, %w, %b : (tensor<?x3x!dgq.uniform<i8:f32, 0.5:3>>, tensor<2x3x!dgq.uniform<i8<-127:127>:f32:0, {0.25,0.125}>>, tensor<2x!dgq.uniform<i32:f32:0, {0.125,0.0625}>>) -> tensor<?x2x!dgq.uniform<i8:f32, 0.25:-1>>
  %yd = dgq.dequantize %yq : tensor<?x2x!dgq.uniform<i8:f32, 0.25:-1>> -> tensor<?x2xf32>
  func.return %yd : tensor<?x2xf32>
}

// -----

// A linear over the last axis of a rank-4 (NHWC) value works in torch layout, between transposes.
// CHECK-LABEL: func.func @linear_rank4_relu
// CHECK-NEXT:    dghw.transpose %x {perm = array<i64: 0, 2, 3, 1>}
// CHECK-NEXT:    %[[NHWC:.*]] = dghw.rescale {{.*}} -> tensor<?x2x3x2xi8>
// CHECK-NEXT:    %[[NCHW:.*]] = dghw.transpose %[[NHWC]] {perm = array<i64: 0, 3, 1, 2>} : tensor<?x2x3x2xi8> -> tensor<?x2x2x3xi8>
// CHECK-NEXT:    dghw.constant
// CHECK-NEXT:    dghw.constant
// CHECK-NEXT:    %[[ACC:.*]] = dghw.fully_connected %[[NCHW]], {{.*}} -> tensor<?x2x2x2xi32>
// CHECK-NEXT:    %[[Y:.*]] = dghw.rescale %[[ACC]] {{.*}} output_zp = -128 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32} : tensor<?x2x2x2xi32> -> tensor<?x2x2x2xi8>
// CHECK-NEXT:    func.return %[[Y]]
func.func @linear_rank4_relu(%x: tensor<?x2x2x3xf32>) -> tensor<?x2x2x2xf32> {
  %xq = dgq.quantize %x : tensor<?x2x2x3xf32> -> tensor<?x2x2x3x!dgq.uniform<i8:f32, 1.0:3>>
  %rq = dgq.requantize %xq : tensor<?x2x2x3x!dgq.uniform<i8:f32, 1.0:3>> -> tensor<?x2x2x3x!dgq.uniform<i8:f32, 0.5:3>>
  %w = dgq.constant {value = dense<[[1, 2, 3], [-4, -5, -6]]> : tensor<2x3xi8>} : tensor<2x3x!dgq.uniform<i8<-127:127>:f32:0, {0.25,0.125}>>
  %yq = dgq.linear %rq, %w {fused_activation = "relu"} : (tensor<?x2x2x3x!dgq.uniform<i8:f32, 0.5:3>>, tensor<2x3x!dgq.uniform<i8<-127:127>:f32:0, {0.25,0.125}>>) -> tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.25:-128>>
  %yd = dgq.dequantize %yq : tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.25:-128>> -> tensor<?x2x2x2xf32>
  func.return %yd : tensor<?x2x2x2xf32>
}

// -----

// LowerAdd: common grid 2 * max(0.5, 0.25) / 2^20 = 2^-20, so the operands scale by 2^19
// and 2^18 (shifts 11, 12) and the sum by 2^-20 / 0.25 = 2^-18 (shift 48).
// CHECK-LABEL: func.func @add
// CHECK-NEXT:    %0 = dghw.rescale %a {multiplier = array<i32: 1073741824>, shift = array<i32: 11>, input_zp = 3 : i32, output_zp = 0 : i32, clamp_min = -2147483648 : i32, clamp_max = 2147483647 : i32} : tensor<?x4xi8> -> tensor<?x4xi32>
// CHECK-NEXT:    %1 = dghw.rescale %b {multiplier = array<i32: 1073741824>, shift = array<i32: 12>, input_zp = -2 : i32, output_zp = 0 : i32, clamp_min = -2147483648 : i32, clamp_max = 2147483647 : i32} : tensor<?x4xi8> -> tensor<?x4xi32>
// CHECK-NEXT:    %2 = dghw.add %0, %1 : (tensor<?x4xi32>, tensor<?x4xi32>) -> tensor<?x4xi32>
// CHECK-NEXT:    %sd = dghw.rescale %2 {multiplier = array<i32: 1073741824>, shift = array<i32: 48>, input_zp = 0 : i32, output_zp = 1 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32} : tensor<?x4xi32> -> tensor<?x4xi8>
// CHECK-NEXT:    func.return %sd
func.func @add(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %aq = dgq.quantize %a : tensor<?x4xf32> -> tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>>
  %bq = dgq.quantize %b : tensor<?x4xf32> -> tensor<?x4x!dgq.uniform<i8:f32, 0.25:-2>>
  %sq = dgq.add %aq, %bq : (tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>>, tensor<?x4x!dgq.uniform<i8:f32, 0.25:-2>>) -> tensor<?x4x!dgq.uniform<i8:f32, 0.25:1>>
  %sd = dgq.dequantize %sq : tensor<?x4x!dgq.uniform<i8:f32, 0.25:1>> -> tensor<?x4xf32>
  func.return %sd : tensor<?x4xf32>
}

// -----

// Rank-4 operands are added in NHWC; relu clamps the final rescale at the output zero point.
// CHECK-LABEL: func.func @add_relu_rank4
// CHECK:         dghw.add %{{.*}}, %{{.*}} : (tensor<?x2x2x1xi32>, tensor<?x2x2x1xi32>) -> tensor<?x2x2x1xi32>
// CHECK-NEXT:    dghw.rescale {{.*}} output_zp = -128 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32} : tensor<?x2x2x1xi32> -> tensor<?x2x2x1xi8>
func.func @add_relu_rank4(%a: tensor<?x1x2x2xf32>, %b: tensor<?x1x2x2xf32>) -> tensor<?x1x2x2xf32> {
  %aq = dgq.quantize %a : tensor<?x1x2x2xf32> -> tensor<?x1x2x2x!dgq.uniform<i8:f32, 0.5:3>>
  %bq = dgq.quantize %b : tensor<?x1x2x2xf32> -> tensor<?x1x2x2x!dgq.uniform<i8:f32, 0.25:-2>>
  %sq = dgq.add %aq, %bq {fused_activation = "relu"} : (tensor<?x1x2x2x!dgq.uniform<i8:f32, 0.5:3>>, tensor<?x1x2x2x!dgq.uniform<i8:f32, 0.25:-2>>) -> tensor<?x1x2x2x!dgq.uniform<i8:f32, 0.25:-128>>
  %sd = dgq.dequantize %sq : tensor<?x1x2x2x!dgq.uniform<i8:f32, 0.25:-128>> -> tensor<?x1x2x2xf32>
  func.return %sd : tensor<?x1x2x2xf32>
}

// -----

// LowerRequantize: factor 0.5 / 0.125 = 4 (shift 28), from zero point 3 to -7.
// CHECK-LABEL: func.func @requantize
// CHECK-NEXT:    %yd = dghw.rescale %x {multiplier = array<i32: 1073741824>, shift = array<i32: 28>, input_zp = 3 : i32, output_zp = -7 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32} : tensor<?x4xi8> -> tensor<?x4xi8>
// CHECK-NEXT:    func.return %yd
func.func @requantize(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %xq = dgq.quantize %x : tensor<?x4xf32> -> tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>>
  %yq = dgq.requantize %xq : tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x4x!dgq.uniform<i8:f32, 0.125:-7>>
  %yd = dgq.dequantize %yq : tensor<?x4x!dgq.uniform<i8:f32, 0.125:-7>> -> tensor<?x4xf32>
  func.return %yd : tensor<?x4xf32>
}

// -----

// LowerReshape: a flatten of an NHWC value reads it in torch (NCHW) order.
// CHECK-LABEL: func.func @flatten
// CHECK-NEXT:    %0 = dghw.transpose %x {perm = array<i64: 0, 2, 3, 1>} : tensor<?x2x1x3xi8> -> tensor<?x1x3x2xi8>
// CHECK-NEXT:    %1 = dghw.rescale %0 {{.*}} : tensor<?x1x3x2xi8> -> tensor<?x1x3x2xi8>
// CHECK-NEXT:    %2 = dghw.transpose %1 {perm = array<i64: 0, 3, 1, 2>} : tensor<?x1x3x2xi8> -> tensor<?x2x1x3xi8>
// CHECK-NEXT:    %fd = dghw.reshape %2 : tensor<?x2x1x3xi8> -> tensor<?x6xi8>
// CHECK-NEXT:    func.return %fd : tensor<?x6xi8>
func.func @flatten(%x: tensor<?x2x1x3xf32>) -> tensor<?x6xf32> {
  %xq = dgq.quantize %x : tensor<?x2x1x3xf32> -> tensor<?x2x1x3x!dgq.uniform<i8:f32, 1.0:3>>
  %rq = dgq.requantize %xq : tensor<?x2x1x3x!dgq.uniform<i8:f32, 1.0:3>> -> tensor<?x2x1x3x!dgq.uniform<i8:f32, 0.5:3>>
  %f = dgq.reshape %rq : tensor<?x2x1x3x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x6x!dgq.uniform<i8:f32, 0.5:3>>
  %fd = dgq.dequantize %f : tensor<?x6x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x6xf32>
  func.return %fd : tensor<?x6xf32>
}

// -----

// LowerReshape to rank 4: the result goes to NHWC for the rescale, back to NCHW at the boundary.
// CHECK-LABEL: func.func @unflatten
// CHECK-NEXT:    %0 = dghw.reshape %x : tensor<?x6xi8> -> tensor<?x2x1x3xi8>
// CHECK-NEXT:    %1 = dghw.transpose %0 {perm = array<i64: 0, 2, 3, 1>} : tensor<?x2x1x3xi8> -> tensor<?x1x3x2xi8>
// CHECK-NEXT:    %2 = dghw.rescale %1 {{.*}} : tensor<?x1x3x2xi8> -> tensor<?x1x3x2xi8>
// CHECK-NEXT:    %rd = dghw.transpose %2 {perm = array<i64: 0, 3, 1, 2>} : tensor<?x1x3x2xi8> -> tensor<?x2x1x3xi8>
func.func @unflatten(%x: tensor<?x6xf32>) -> tensor<?x2x1x3xf32> {
  %xq = dgq.quantize %x : tensor<?x6xf32> -> tensor<?x6x!dgq.uniform<i8:f32, 0.5:3>>
  %v = dgq.reshape %xq : tensor<?x6x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x2x1x3x!dgq.uniform<i8:f32, 0.5:3>>
  %rq = dgq.requantize %v : tensor<?x2x1x3x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x2x1x3x!dgq.uniform<i8:f32, 0.25:3>>
  %rd = dgq.dequantize %rq : tensor<?x2x1x3x!dgq.uniform<i8:f32, 0.25:3>> -> tensor<?x2x1x3xf32>
  func.return %rd : tensor<?x2x1x3xf32>
}

// -----

// FoldFlattenReorderIntoFullyConnected: the transpose back to NCHW goes away and the
// weight's columns move from (c, h, w) to (h, w, c) order: feature (c, w) = 2c + w of
// [1, 2, 3, 4] moves to column 2w + c, giving [1, 3, 2, 4].
// CHECK-LABEL: func.func @flatten_linear
// CHECK-NEXT:    %0 = dghw.transpose %x {perm = array<i64: 0, 2, 3, 1>} : tensor<?x2x1x2xi8> -> tensor<?x1x2x2xi8>
// CHECK-NEXT:    %1 = dghw.rescale %0 {{.*}} : tensor<?x1x2x2xi8> -> tensor<?x1x2x2xi8>
// CHECK-NEXT:    %2 = dghw.constant {value = dense<0> : tensor<1xi32>} : tensor<1xi32>
// CHECK-NEXT:    %3 = dghw.reshape %1 : tensor<?x1x2x2xi8> -> tensor<?x4xi8>
// CHECK-NEXT:    %4 = dghw.constant {value = dense<{{\[}}[1, 3, 2, 4]]> : tensor<1x4xi8>} : tensor<1x4xi8>
// CHECK-NEXT:    %5 = dghw.fully_connected %3, %4, %2 {input_zp = 3 : i32, weight_zp = 0 : i32} : (tensor<?x4xi8>, tensor<1x4xi8>, tensor<1xi32>) -> tensor<?x1xi32>
// CHECK-NEXT:    %yd = dghw.rescale %5
// CHECK-NOT:     dghw.transpose
func.func @flatten_linear(%x: tensor<?x2x1x2xf32>) -> tensor<?x1xf32> {
  %xq = dgq.quantize %x : tensor<?x2x1x2xf32> -> tensor<?x2x1x2x!dgq.uniform<i8:f32, 1.0:3>>
  %rq = dgq.requantize %xq : tensor<?x2x1x2x!dgq.uniform<i8:f32, 1.0:3>> -> tensor<?x2x1x2x!dgq.uniform<i8:f32, 0.5:3>>
  %f = dgq.reshape %rq : tensor<?x2x1x2x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>>
  %w = dgq.constant {value = dense<[[1, 2, 3, 4]]> : tensor<1x4xi8>} : tensor<1x4x!dgq.uniform<i8<-127:127>:f32:0, {0.25}>>
  %yq = dgq.linear %f, %w : (tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>>, tensor<1x4x!dgq.uniform<i8<-127:127>:f32:0, {0.25}>>) -> tensor<?x1x!dgq.uniform<i8:f32, 0.25:-1>>
  %yd = dgq.dequantize %yq : tensor<?x1x!dgq.uniform<i8:f32, 0.25:-1>> -> tensor<?x1xf32>
  func.return %yd : tensor<?x1xf32>
}

// -----

// The fold needs the flatten to have no other use: here the flattened value is also returned.
// CHECK-LABEL: func.func @flatten_linear_shared
// CHECK:         %[[NCHW:.*]] = dghw.transpose %{{.*}} {perm = array<i64: 0, 3, 1, 2>}
// CHECK-NEXT:    %[[FLAT:.*]] = dghw.reshape %[[NCHW]] : tensor<?x2x1x2xi8> -> tensor<?x4xi8>
// CHECK-NEXT:    dghw.constant {value = dense<{{\[}}[1, 2, 3, 4]]> : tensor<1x4xi8>}
// CHECK:         dghw.fully_connected %[[FLAT]]
// CHECK:         func.return %{{.*}}, %[[FLAT]]
func.func @flatten_linear_shared(%x: tensor<?x2x1x2xf32>) -> (tensor<?x1xf32>, tensor<?x4xf32>) {
  %xq = dgq.quantize %x : tensor<?x2x1x2xf32> -> tensor<?x2x1x2x!dgq.uniform<i8:f32, 1.0:3>>
  %rq = dgq.requantize %xq : tensor<?x2x1x2x!dgq.uniform<i8:f32, 1.0:3>> -> tensor<?x2x1x2x!dgq.uniform<i8:f32, 0.5:3>>
  %f = dgq.reshape %rq : tensor<?x2x1x2x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>>
  %w = dgq.constant {value = dense<[[1, 2, 3, 4]]> : tensor<1x4xi8>} : tensor<1x4x!dgq.uniform<i8<-127:127>:f32:0, {0.25}>>
  %yq = dgq.linear %f, %w : (tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>>, tensor<1x4x!dgq.uniform<i8<-127:127>:f32:0, {0.25}>>) -> tensor<?x1x!dgq.uniform<i8:f32, 0.25:-1>>
  %yd = dgq.dequantize %yq : tensor<?x1x!dgq.uniform<i8:f32, 0.25:-1>> -> tensor<?x1xf32>
  %fd = dgq.dequantize %f : tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x4xf32>
  func.return %yd, %fd : tensor<?x1xf32>, tensor<?x4xf32>
}

// -----

// LowerConv2d, depthwise: the [C, 1, kh, kw] weight becomes [kh, kw, C].
// CHECK-LABEL: func.func @depthwise_conv2d
// CHECK-NEXT:    %0 = dghw.transpose %x {perm = array<i64: 0, 2, 3, 1>} : tensor<?x2x3x3xi8> -> tensor<?x3x3x2xi8>
// CHECK-NEXT:    %1 = dghw.constant {value = dense<{{\[\[\[}}1, 5], [2, 6]], {{\[\[}}3, 7], [4, 8]]]> : tensor<2x2x2xi8>} : tensor<2x2x2xi8>
// CHECK-NEXT:    %2 = dghw.constant {value = dense<[8, -8]> : tensor<2xi32>} : tensor<2xi32>
// CHECK-NEXT:    %3 = dghw.depthwise_conv2d %0, %1, %2 {stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 1, 0>, input_zp = 3 : i32, weight_zp = 0 : i32} : (tensor<?x3x3x2xi8>, tensor<2x2x2xi8>, tensor<2xi32>) -> tensor<?x2x3x2xi32>
// CHECK-NEXT:    %4 = dghw.rescale %3 {multiplier = array<i32: 1073741824, 1073741824>, shift = array<i32: 31, 32>, input_zp = 0 : i32, output_zp = -1 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32} : tensor<?x2x3x2xi32> -> tensor<?x2x3x2xi8>
// CHECK-NEXT:    %yd = dghw.transpose %4 {perm = array<i64: 0, 3, 1, 2>}
// LOC-LABEL: func.func @depthwise_conv2d
// LOC:         dghw.depthwise_conv2d {{.*}} loc("dw.py":2:0)
func.func @depthwise_conv2d(%x: tensor<?x2x3x3xf32>) -> tensor<?x2x2x3xf32> {
  %xq = dgq.quantize %x : tensor<?x2x3x3xf32> -> tensor<?x2x3x3x!dgq.uniform<i8:f32, 0.5:3>>
  %w = dgq.constant {value = dense<[[[[1, 2], [3, 4]]], [[[5, 6], [7, 8]]]]> : tensor<2x1x2x2xi8>} : tensor<2x1x2x2x!dgq.uniform<i8<-127:127>:f32:0, {0.25,0.125}>>
  %b = dgq.constant {value = dense<[8, -8]> : tensor<2xi32>} : tensor<2x!dgq.uniform<i32:f32:0, {0.125,0.0625}>>
  %yq = dgq.conv2d %xq, %w, %b {stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 1, 0>, groups = 2 : i64} : (tensor<?x2x3x3x!dgq.uniform<i8:f32, 0.5:3>>, tensor<2x1x2x2x!dgq.uniform<i8<-127:127>:f32:0, {0.25,0.125}>>, tensor<2x!dgq.uniform<i32:f32:0, {0.125,0.0625}>>) -> tensor<?x2x2x3x!dgq.uniform<i8:f32, 0.25:-1>> loc("dw.py":2:0)
  %yd = dgq.dequantize %yq : tensor<?x2x2x3x!dgq.uniform<i8:f32, 0.25:-1>> -> tensor<?x2x2x3xf32>
  func.return %yd : tensor<?x2x2x3xf32>
}

// -----

// LowerMaxPool2d: no rescale, the grid is shared.
// CHECK-LABEL: func.func @max_pool2d
// CHECK-NEXT:    %0 = dghw.transpose %x
// CHECK-NEXT:    %1 = dghw.max_pool2d %0 {kernel = array<i64: 2, 2>, stride = array<i64: 2, 1>} : tensor<?x4x5x2xi8> -> tensor<?x2x4x2xi8>
// CHECK-NEXT:    %pd = dghw.transpose %1 {perm = array<i64: 0, 3, 1, 2>} : tensor<?x2x4x2xi8> -> tensor<?x2x2x4xi8>
// CHECK-NEXT:    func.return %pd
// LOC-LABEL: func.func @max_pool2d
// LOC:         dghw.max_pool2d {{.*}} loc("pool.py":3:0)
func.func @max_pool2d(%x: tensor<?x2x4x5xf32>) -> tensor<?x2x2x4xf32> {
  %xq = dgq.quantize %x : tensor<?x2x4x5xf32> -> tensor<?x2x4x5x!dgq.uniform<i8:f32, 0.5:3>>
  %p = dgq.max_pool2d %xq {kernel = array<i64: 2, 2>, stride = array<i64: 2, 1>, pad = array<i64: 0, 0, 0, 0>} : tensor<?x2x4x5x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x2x2x4x!dgq.uniform<i8:f32, 0.5:3>> loc("pool.py":3:0)
  %pd = dgq.dequantize %p : tensor<?x2x2x4x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x2x2x4xf32>
  func.return %pd : tensor<?x2x2x4xf32>
}

// -----

// LowerAvgPool2d: both zero points are the shared grid's; the divisor rule travels as properties.
// CHECK-LABEL: func.func @avg_pool2d
// CHECK-NEXT:    %0 = dghw.transpose %x
// CHECK-NEXT:    %1 = dghw.avg_pool2d %0 {kernel = array<i64: 3, 2>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 0, 0>, count_include_pad = false, input_zp = 3 : i32, output_zp = 3 : i32} : tensor<?x5x5x2xi8> -> tensor<?x3x3x2xi8>
// CHECK-NEXT:    %pd = dghw.transpose %1
// LOC-LABEL: func.func @avg_pool2d
// LOC:         dghw.avg_pool2d {{.*}} loc("pool.py":5:0)
func.func @avg_pool2d(%x: tensor<?x2x5x5xf32>) -> tensor<?x2x3x3xf32> {
  %xq = dgq.quantize %x : tensor<?x2x5x5xf32> -> tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:3>>
  %p = dgq.avg_pool2d %xq {kernel = array<i64: 3, 2>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 0, 0>, count_include_pad = false} : tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x2x3x3x!dgq.uniform<i8:f32, 0.5:3>> loc("pool.py":5:0)
  %pd = dgq.dequantize %p : tensor<?x2x3x3x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x2x3x3xf32>
  func.return %pd : tensor<?x2x3x3xf32>
}

// -----

// LowerAvgPool2d with a divisor_override.
// CHECK-LABEL: func.func @avg_pool2d_divisor_override
// CHECK:         dghw.avg_pool2d %0 {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, count_include_pad = true, divisor_override = 3 : i64, input_zp = -7 : i32, output_zp = -7 : i32}
func.func @avg_pool2d_divisor_override(%x: tensor<?x1x4x4xf32>) -> tensor<?x1x2x2xf32> {
  %xq = dgq.quantize %x : tensor<?x1x4x4xf32> -> tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.5:-7>>
  %p = dgq.avg_pool2d %xq {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, count_include_pad = true, divisor_override = 3 : i64} : tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.5:-7>> -> tensor<?x1x2x2x!dgq.uniform<i8:f32, 0.5:-7>>
  %pd = dgq.dequantize %p : tensor<?x1x2x2x!dgq.uniform<i8:f32, 0.5:-7>> -> tensor<?x1x2x2xf32>
  func.return %pd : tensor<?x1x2x2xf32>
}

// -----

// LowerSoftmax: with input scale ln 2, exp_table[k] = round(2^F * 2^-k), F = 31 - bit_length(4) = 28.
// The channel axis 1 of NCHW is axis 3 on the device; read twice, the softmax keeps its
// layout transposes (FoldTransposesAroundSoftmax does not apply).
// CHECK-LABEL: func.func @softmax_channels
// CHECK-NEXT:    %0 = dghw.transpose %x {perm = array<i64: 0, 2, 3, 1>} : tensor<?x4x2x2xi8> -> tensor<?x2x2x4xi8>
// CHECK-NEXT:    %1 = dghw.softmax %0 {exp_table = array<i32: 268435456, 134217728, 67108864, {{.*}}, 4, 2, 1, 0, 0, {{.*}}>, axis = 3 : i64} : tensor<?x2x2x4xi8> -> tensor<?x2x2x4xi8>
// CHECK-NEXT:    %sd = dghw.transpose %1 {perm = array<i64: 0, 3, 1, 2>}
// CHECK-NEXT:    %sd2 = dghw.transpose %1 {perm = array<i64: 0, 3, 1, 2>}
// CHECK-NEXT:    func.return %sd, %sd2
// LOC-LABEL: func.func @softmax_channels
// LOC:         dghw.softmax {{.*}} loc("softmax.py":2:0)
func.func @softmax_channels(%x: tensor<?x4x2x2xf32>) -> (tensor<?x4x2x2xf32>, tensor<?x4x2x2xf32>) {
  %xq = dgq.quantize %x : tensor<?x4x2x2xf32> -> tensor<?x4x2x2x!dgq.uniform<i8:f32, 0.6931471805599453:3>>
  %s = dgq.softmax %xq {axis = 1 : i64} : tensor<?x4x2x2x!dgq.uniform<i8:f32, 0.6931471805599453:3>> -> tensor<?x4x2x2x!dgq.uniform<i8:f32, 0.00390625:-128>> loc("softmax.py":2:0)
  %sd = dgq.dequantize %s : tensor<?x4x2x2x!dgq.uniform<i8:f32, 0.00390625:-128>> -> tensor<?x4x2x2xf32>
  %sd2 = dgq.dequantize %s : tensor<?x4x2x2x!dgq.uniform<i8:f32, 0.00390625:-128>> -> tensor<?x4x2x2xf32>
  func.return %sd, %sd2 : tensor<?x4x2x2xf32>, tensor<?x4x2x2xf32>
}

// -----

// FoldTransposesAroundSoftmax: a softmax read only through the inverse of its input's
// layout transpose runs along the torch axis on the value itself, under its own location.
// CHECK-LABEL: func.func @softmax_between_inverse_transposes
// CHECK-NEXT:    %sd = dghw.softmax %x {exp_table = array<i32: 268435456, 134217728, 67108864, {{.*}}>, axis = 1 : i64} : tensor<?x4x2x2xi8> -> tensor<?x4x2x2xi8>
// CHECK-NEXT:    func.return %sd
// LOC-LABEL: func.func @softmax_between_inverse_transposes
// LOC:         dghw.softmax {{.*}} loc("softmax.py":3:0)
func.func @softmax_between_inverse_transposes(%x: tensor<?x4x2x2xf32>) -> tensor<?x4x2x2xf32> {
  %xq = dgq.quantize %x : tensor<?x4x2x2xf32> -> tensor<?x4x2x2x!dgq.uniform<i8:f32, 0.6931471805599453:3>>
  %s = dgq.softmax %xq {axis = 1 : i64} : tensor<?x4x2x2x!dgq.uniform<i8:f32, 0.6931471805599453:3>> -> tensor<?x4x2x2x!dgq.uniform<i8:f32, 0.00390625:-128>> loc("softmax.py":3:0)
  %sd = dgq.dequantize %s : tensor<?x4x2x2x!dgq.uniform<i8:f32, 0.00390625:-128>> -> tensor<?x4x2x2xf32>
  func.return %sd : tensor<?x4x2x2xf32>
}

// -----

// LowerSoftmax on a rank-2 value keeps its axis; a row of 10 gets F = 31 - bit_length(10) = 27.
// CHECK-LABEL: func.func @softmax_rank2
// CHECK-NEXT:    %sd = dghw.softmax %x {exp_table = array<i32: 134217728, 126085887, 118446729, {{.*}}>, axis = 1 : i64} : tensor<?x10xi8> -> tensor<?x10xi8>
func.func @softmax_rank2(%x: tensor<?x10xf32>) -> tensor<?x10xf32> {
  %xq = dgq.quantize %x : tensor<?x10xf32> -> tensor<?x10x!dgq.uniform<i8:f32, 0.0625:3>>
  %s = dgq.softmax %xq {axis = 1 : i64} : tensor<?x10x!dgq.uniform<i8:f32, 0.0625:3>> -> tensor<?x10x!dgq.uniform<i8:f32, 0.00390625:-128>>
  %sd = dgq.dequantize %s : tensor<?x10x!dgq.uniform<i8:f32, 0.00390625:-128>> -> tensor<?x10xf32>
  func.return %sd : tensor<?x10xf32>
}

// -----

// LowerSigmoid: with input scale 1 and zero point 0, table[x + 128] = round(256 sigmoid(x)) - 128:
// -128 up to x = -7, then -127 (x = -6), ..., 0 (x = 0), ..., 126 (x = 5), then 127.
// CHECK-LABEL: func.func @sigmoid
// CHECK-NEXT:    %sd = dghw.table %x {table = array<i8: -128, {{(-128, )+}}-127, -126, -123, -116, -97, -59, 0, 59, 97, 116, 123, 126, 127, {{(127, )+}}127>} : tensor<?x4xi8> -> tensor<?x4xi8>
// LOC-LABEL: func.func @sigmoid
// LOC:         dghw.table {{.*}} loc("sigmoid.py":2:0)
func.func @sigmoid(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %xq = dgq.quantize %x : tensor<?x4xf32> -> tensor<?x4x!dgq.uniform<i8:f32, 1.0>>
  %s = dgq.sigmoid %xq : tensor<?x4x!dgq.uniform<i8:f32, 1.0>> -> tensor<?x4x!dgq.uniform<i8:f32, 0.00390625:-128>> loc("sigmoid.py":2:0)
  %sd = dgq.dequantize %s : tensor<?x4x!dgq.uniform<i8:f32, 0.00390625:-128>> -> tensor<?x4xf32>
  func.return %sd : tensor<?x4xf32>
}

// -----

// LowerConcat: torch axis 1 (channels) is device axis 3; no rescale.
// CHECK-LABEL: func.func @concat
// CHECK-NEXT:    %0 = dghw.transpose %a
// CHECK-NEXT:    %1 = dghw.transpose %b
// CHECK-NEXT:    %2 = dghw.concat %0, %1 {axis = 3 : i64} : (tensor<?x3x3x2xi8>, tensor<?x3x3x1xi8>) -> tensor<?x3x3x3xi8>
// CHECK-NEXT:    %cd = dghw.transpose %2
// LOC-LABEL: func.func @concat
// LOC:         dghw.concat {{.*}} loc("cat.py":6:0)
func.func @concat(%a: tensor<?x2x3x3xf32>, %b: tensor<?x1x3x3xf32>) -> tensor<?x3x3x3xf32> {
  %aq = dgq.quantize %a : tensor<?x2x3x3xf32> -> tensor<?x2x3x3x!dgq.uniform<i8:f32, 0.5:3>>
  %bq = dgq.quantize %b : tensor<?x1x3x3xf32> -> tensor<?x1x3x3x!dgq.uniform<i8:f32, 0.5:3>>
  %c = dgq.concat %aq, %bq {axis = 1 : i64} : (tensor<?x2x3x3x!dgq.uniform<i8:f32, 0.5:3>>, tensor<?x1x3x3x!dgq.uniform<i8:f32, 0.5:3>>) -> tensor<?x3x3x3x!dgq.uniform<i8:f32, 0.5:3>> loc("cat.py":6:0)
  %cd = dgq.dequantize %c : tensor<?x3x3x3x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x3x3x3xf32>
  func.return %cd : tensor<?x3x3x3xf32>
}

// -----

// LowerConcat: torch axis 3 (width) is device axis 2; other ranks keep their axes.
// CHECK-LABEL: func.func @concat_width_and_rank2
// CHECK:         dghw.concat %0, %0 {axis = 2 : i64} : (tensor<?x3x3x2xi8>, tensor<?x3x3x2xi8>) -> tensor<?x3x6x2xi8>
// CHECK-NEXT:    %dd = dghw.concat %b, %b {axis = 1 : i64} : (tensor<?x2xi8>, tensor<?x2xi8>) -> tensor<?x4xi8>
func.func @concat_width_and_rank2(%a: tensor<?x2x3x3xf32>, %b: tensor<?x2xf32>) -> (tensor<?x2x3x6xf32>, tensor<?x4xf32>) {
  %aq = dgq.quantize %a : tensor<?x2x3x3xf32> -> tensor<?x2x3x3x!dgq.uniform<i8:f32, 0.5:3>>
  %bq = dgq.quantize %b : tensor<?x2xf32> -> tensor<?x2x!dgq.uniform<i8:f32, 0.25:1>>
  %c = dgq.concat %aq, %aq {axis = 3 : i64} : (tensor<?x2x3x3x!dgq.uniform<i8:f32, 0.5:3>>, tensor<?x2x3x3x!dgq.uniform<i8:f32, 0.5:3>>) -> tensor<?x2x3x6x!dgq.uniform<i8:f32, 0.5:3>>
  %d = dgq.concat %bq, %bq {axis = 1 : i64} : (tensor<?x2x!dgq.uniform<i8:f32, 0.25:1>>, tensor<?x2x!dgq.uniform<i8:f32, 0.25:1>>) -> tensor<?x4x!dgq.uniform<i8:f32, 0.25:1>>
  %cd = dgq.dequantize %c : tensor<?x2x3x6x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x2x3x6xf32>
  %dd = dgq.dequantize %d : tensor<?x4x!dgq.uniform<i8:f32, 0.25:1>> -> tensor<?x4xf32>
  func.return %cd, %dd : tensor<?x2x3x6xf32>, tensor<?x4xf32>
}

// -----

// LowerResizeNearest: NHWC, same mode, no rescale.
// CHECK-LABEL: func.func @resize_nearest
// CHECK-NEXT:    %0 = dghw.transpose %x
// CHECK-NEXT:    %1 = dghw.resize_nearest %0 {mode = "nearest-exact"} : tensor<?x3x3x2xi8> -> tensor<?x5x4x2xi8>
// CHECK-NEXT:    %ud = dghw.transpose %1
// LOC-LABEL: func.func @resize_nearest
// LOC:         dghw.resize_nearest {{.*}} loc("up.py":2:0)
func.func @resize_nearest(%x: tensor<?x2x3x3xf32>) -> tensor<?x2x5x4xf32> {
  %xq = dgq.quantize %x : tensor<?x2x3x3xf32> -> tensor<?x2x3x3x!dgq.uniform<i8:f32, 0.5:3>>
  %u = dgq.resize_nearest %xq {mode = "nearest-exact"} : tensor<?x2x3x3x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x2x5x4x!dgq.uniform<i8:f32, 0.5:3>> loc("up.py":2:0)
  %ud = dgq.dequantize %u : tensor<?x2x5x4x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x2x5x4xf32>
  func.return %ud : tensor<?x2x5x4xf32>
}

// -----

// LowerFlattenChannelsLast: dg.Flatten is a plain reshape of the NHWC map, and the linear
// after it keeps its weight as it is.
// CHECK-LABEL: func.func @flatten_channels_last_linear
// CHECK-NEXT:    %0 = dghw.transpose %x {perm = array<i64: 0, 2, 3, 1>} : tensor<?x2x1x2xi8> -> tensor<?x1x2x2xi8>
// CHECK-NEXT:    %1 = dghw.rescale %0
// CHECK-NEXT:    %2 = dghw.reshape %1 : tensor<?x1x2x2xi8> -> tensor<?x4xi8>
// CHECK-NEXT:    %3 = dghw.constant {value = dense<{{\[}}[1, 2, 3, 4]]> : tensor<1x4xi8>} : tensor<1x4xi8>
// CHECK-NEXT:    %4 = dghw.constant {value = dense<0> : tensor<1xi32>}
// CHECK-NEXT:    %5 = dghw.fully_connected %2, %3, %4
// CHECK-NOT:     dghw.transpose
// LOC-LABEL: func.func @flatten_channels_last_linear
// LOC:         dghw.reshape {{.*}} loc("model.py":12:0)
func.func @flatten_channels_last_linear(%x: tensor<?x2x1x2xf32>) -> tensor<?x1xf32> {
  %xq = dgq.quantize %x : tensor<?x2x1x2xf32> -> tensor<?x2x1x2x!dgq.uniform<i8:f32, 1.0:3>>
  %rq = dgq.requantize %xq : tensor<?x2x1x2x!dgq.uniform<i8:f32, 1.0:3>> -> tensor<?x2x1x2x!dgq.uniform<i8:f32, 0.5:3>>
  %f = dgq.flatten_channels_last %rq : tensor<?x2x1x2x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>> loc("model.py":12:0)
  %w = dgq.constant {value = dense<[[1, 2, 3, 4]]> : tensor<1x4xi8>} : tensor<1x4x!dgq.uniform<i8<-127:127>:f32:0, {0.25}>>
  %yq = dgq.linear %f, %w : (tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>>, tensor<1x4x!dgq.uniform<i8<-127:127>:f32:0, {0.25}>>) -> tensor<?x1x!dgq.uniform<i8:f32, 0.25:-1>>
  %yd = dgq.dequantize %yq : tensor<?x1x!dgq.uniform<i8:f32, 0.25:-1>> -> tensor<?x1xf32>
  func.return %yd : tensor<?x1xf32>
}

// -----

// FoldPadIntoConv2d and FoldPadIntoAvgPool2d run here too, for hand-written dgq.
// CHECK-LABEL: func.func @pad_folds
// CHECK-NEXT:    %0 = dghw.transpose %x
// CHECK-NEXT:    dghw.constant
// CHECK-NEXT:    dghw.constant
// CHECK-NEXT:    dghw.conv2d %0, {{.*}} {stride = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, input_zp = 3 : i32, weight_zp = 0 : i32}
// CHECK-NEXT:    dghw.rescale
// CHECK-NEXT:    dghw.avg_pool2d %0 {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>, count_include_pad = true, input_zp = 3 : i32, output_zp = 3 : i32}
func.func @pad_folds(%x: tensor<?x1x4x4xf32>) -> (tensor<?x1x4x4xf32>, tensor<?x1x3x3xf32>) {
  %xq = dgq.quantize %x : tensor<?x1x4x4xf32> -> tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.5:3>>
  %p = dgq.pad %xq {pad = array<i64: 1, 1, 1, 1>} : tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x1x6x6x!dgq.uniform<i8:f32, 0.5:3>>
  %w = dgq.constant {value = dense<1> : tensor<1x1x3x3xi8>} : tensor<1x1x3x3x!dgq.uniform<i8<-127:127>:f32:0, {0.25}>>
  %yq = dgq.conv2d %p, %w {stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>} : (tensor<?x1x6x6x!dgq.uniform<i8:f32, 0.5:3>>, tensor<1x1x3x3x!dgq.uniform<i8<-127:127>:f32:0, {0.25}>>) -> tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.25:-1>>
  %aq = dgq.avg_pool2d %p {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, count_include_pad = false} : tensor<?x1x6x6x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x1x3x3x!dgq.uniform<i8:f32, 0.5:3>>
  %yd = dgq.dequantize %yq : tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.25:-1>> -> tensor<?x1x4x4xf32>
  %ad = dgq.dequantize %aq : tensor<?x1x3x3x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x1x3x3xf32>
  func.return %yd, %ad : tensor<?x1x4x4xf32>, tensor<?x1x3x3xf32>
}

// -----

// LowerTranspose, feature rank 2: the permutation as it is.
// CHECK-LABEL: func.func @transpose_rank3
// CHECK-NEXT:    %td = dghw.transpose %x {perm = array<i64: 0, 2, 1>} : tensor<?x5x8xi8> -> tensor<?x8x5xi8>
// CHECK-NEXT:    func.return %td
// LOC-LABEL: func.func @transpose_rank3
// LOC:         dghw.transpose {{.*}} loc("t.py":4:0)
func.func @transpose_rank3(%x: tensor<?x5x8xf32>) -> tensor<?x8x5xf32> {
  %xq = dgq.quantize %x : tensor<?x5x8xf32> -> tensor<?x5x8x!dgq.uniform<i8:f32, 0.5:3>>
  %t = dgq.transpose %xq {perm = array<i64: 0, 2, 1>} : tensor<?x5x8x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x8x5x!dgq.uniform<i8:f32, 0.5:3>> loc("t.py":4:0)
  %td = dgq.dequantize %t : tensor<?x8x5x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x8x5xf32>
  func.return %td : tensor<?x8x5xf32>
}

// -----

// LowerTranspose, feature rank 3: torch [B, H, S, D] -> [B, H, D, S] is NHWC [B, S, D, H] ->
// [B, D, S, H] on the device, perm [0, 2, 1, 3]; with the boundary transposes to and from
// NHWC, FoldTransposeOfTranspose leaves torch's own permutation.
// CHECK-LABEL: func.func @transpose_rank4
// CHECK-NEXT:    %td = dghw.transpose %x {perm = array<i64: 0, 1, 3, 2>} : tensor<?x2x5x4xi8> -> tensor<?x2x4x5xi8>
// CHECK-NEXT:    func.return %td
func.func @transpose_rank4(%x: tensor<?x2x5x4xf32>) -> tensor<?x2x4x5xf32> {
  %xq = dgq.quantize %x : tensor<?x2x5x4xf32> -> tensor<?x2x5x4x!dgq.uniform<i8:f32, 0.5:3>>
  %t = dgq.transpose %xq {perm = array<i64: 0, 1, 3, 2>} : tensor<?x2x5x4x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x2x4x5x!dgq.uniform<i8:f32, 0.5:3>>
  %td = dgq.dequantize %t : tensor<?x2x4x5x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x2x4x5xf32>
  func.return %td : tensor<?x2x4x5xf32>
}

// -----

// LowerSlice, rank 3: the same axis and range.
// CHECK-LABEL: func.func @slice_rank3
// CHECK-NEXT:    %sd = dghw.slice %x {axis = 1 : i64, start = 1 : i64, end = 4 : i64} : tensor<?x5x8xi8> -> tensor<?x3x8xi8>
// CHECK-NEXT:    func.return %sd
// LOC-LABEL: func.func @slice_rank3
// LOC:         dghw.slice {{.*}} loc("s.py":5:0)
func.func @slice_rank3(%x: tensor<?x5x8xf32>) -> tensor<?x3x8xf32> {
  %xq = dgq.quantize %x : tensor<?x5x8xf32> -> tensor<?x5x8x!dgq.uniform<i8:f32, 0.5:3>>
  %s = dgq.slice %xq {axis = 1 : i64, start = 1 : i64, end = 4 : i64} : tensor<?x5x8x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x3x8x!dgq.uniform<i8:f32, 0.5:3>> loc("s.py":5:0)
  %sd = dgq.dequantize %s : tensor<?x3x8x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x3x8xf32>
  func.return %sd : tensor<?x3x8xf32>
}

// -----

// LowerSlice, rank 4 (a sequence tensor reshaped to heads): torch axis 3 is NHWC axis 2.
// CHECK-LABEL: func.func @slice_rank4
// CHECK:         %2 = dghw.slice %1 {axis = 2 : i64, start = 0 : i64, end = 2 : i64} : tensor<?x5x4x2xi8> -> tensor<?x5x2x2xi8>
func.func @slice_rank4(%x: tensor<?x5x8xf32>) -> tensor<?x2x5x2xf32> {
  %xq = dgq.quantize %x : tensor<?x5x8xf32> -> tensor<?x5x8x!dgq.uniform<i8:f32, 0.5:3>>
  %h = dgq.reshape %xq : tensor<?x5x8x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x2x5x4x!dgq.uniform<i8:f32, 0.5:3>>
  %s = dgq.slice %h {axis = 3 : i64, start = 0 : i64, end = 2 : i64} : tensor<?x2x5x4x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x2x5x2x!dgq.uniform<i8:f32, 0.5:3>>
  %sd = dgq.dequantize %s : tensor<?x2x5x2x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x2x5x2xf32>
  func.return %sd : tensor<?x2x5x2xf32>
}

// -----

// LowerMulConstant: exact i32 product of the centred integers, then one rescale by
// 0.5 * 0.125 / 0.25 = 0.25 (multiplier 2^30, shift 32).
// CHECK-LABEL: func.func @mul_constant
// CHECK-NEXT:    %0 = dghw.constant {value = dense<{{\[\[\[}}1, -2, 3, 4], [5, 6, 7, -8]]]> : tensor<1x2x4xi8>} : tensor<1x2x4xi8>
// CHECK-NEXT:    %1 = dghw.mul %x, %0 {input_zp = 3 : i32, constant_zp = 0 : i32} : (tensor<?x2x4xi8>, tensor<1x2x4xi8>) -> tensor<?x2x4xi32>
// CHECK-NEXT:    %md = dghw.rescale %1 {multiplier = array<i32: 1073741824>, shift = array<i32: 32>, input_zp = 0 : i32, output_zp = -1 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32} : tensor<?x2x4xi32> -> tensor<?x2x4xi8>
// CHECK-NEXT:    func.return %md
func.func @mul_constant(%x: tensor<?x2x4xf32>) -> tensor<?x2x4xf32> {
  %xq = dgq.quantize %x : tensor<?x2x4xf32> -> tensor<?x2x4x!dgq.uniform<i8:f32, 0.5:3>>
  %c = dgq.constant {value = dense<[[1, -2, 3, 4], [5, 6, 7, -8]]> : tensor<2x4xi8>} : tensor<2x4x!dgq.uniform<i8<-127:127>:f32, 0.125>>
  %mq = dgq.mul_constant %xq, %c : (tensor<?x2x4x!dgq.uniform<i8:f32, 0.5:3>>, tensor<2x4x!dgq.uniform<i8<-127:127>:f32, 0.125>>) -> tensor<?x2x4x!dgq.uniform<i8:f32, 0.25:-1>>
  %md = dgq.dequantize %mq : tensor<?x2x4x!dgq.uniform<i8:f32, 0.25:-1>> -> tensor<?x2x4xf32>
  func.return %md : tensor<?x2x4xf32>
}

// -----

// A constant [C, 1, 1] on an NCHW map: padded to [1, C, 1, 1], then NHWC [1, 1, 1, C].
// CHECK-LABEL: func.func @mul_constant_rank4
// CHECK:         dghw.constant {value = dense<{{\[\[\[\[}}2, -3]]]]> : tensor<1x1x1x2xi8>} : tensor<1x1x1x2xi8>
// CHECK:         dghw.mul %{{.*}}, %{{.*}} {input_zp = 3 : i32, constant_zp = 0 : i32} : (tensor<?x2x2x2xi8>, tensor<1x1x1x2xi8>) -> tensor<?x2x2x2xi32>
func.func @mul_constant_rank4(%x: tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32> {
  %xq = dgq.quantize %x : tensor<?x2x2x2xf32> -> tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.5:3>>
  %c = dgq.constant {value = dense<[[[2]], [[-3]]]> : tensor<2x1x1xi8>} : tensor<2x1x1x!dgq.uniform<i8<-127:127>:f32, 0.125>>
  %mq = dgq.mul_constant %xq, %c : (tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.5:3>>, tensor<2x1x1x!dgq.uniform<i8<-127:127>:f32, 0.125>>) -> tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.25:-1>>
  %md = dgq.dequantize %mq : tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.25:-1>> -> tensor<?x2x2x2xf32>
  func.return %md : tensor<?x2x2x2xf32>
}

// -----

// LowerMatmul: factor 0.25 rides on the rescale: 0.5 * 0.25 * 0.25 / 0.125 = 0.25 (shift 32).
// CHECK-LABEL: func.func @matmul_scale
// CHECK-NEXT:    %0 = dghw.matmul %a, %b {lhs_zp = 3 : i32, rhs_zp = -2 : i32} : (tensor<?x2x4xi8>, tensor<?x4x3xi8>) -> tensor<?x2x3xi32>
// CHECK-NEXT:    %sd = dghw.rescale %0 {multiplier = array<i32: 1073741824>, shift = array<i32: 32>, input_zp = 0 : i32, output_zp = 1 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32} : tensor<?x2x3xi32> -> tensor<?x2x3xi8>
// CHECK-NEXT:    func.return %sd
func.func @matmul_scale(%a: tensor<?x2x4xf32>, %b: tensor<?x4x3xf32>) -> tensor<?x2x3xf32> {
  %aq = dgq.quantize %a : tensor<?x2x4xf32> -> tensor<?x2x4x!dgq.uniform<i8:f32, 0.5:3>>
  %bq = dgq.quantize %b : tensor<?x4x3xf32> -> tensor<?x4x3x!dgq.uniform<i8:f32, 0.25:-2>>
  %sq = dgq.matmul %aq, %bq {factor = 0.25 : f64} : (tensor<?x2x4x!dgq.uniform<i8:f32, 0.5:3>>, tensor<?x4x3x!dgq.uniform<i8:f32, 0.25:-2>>) -> tensor<?x2x3x!dgq.uniform<i8:f32, 0.125:1>>
  %sd = dgq.dequantize %sq : tensor<?x2x3x!dgq.uniform<i8:f32, 0.125:1>> -> tensor<?x2x3xf32>
  func.return %sd : tensor<?x2x3xf32>
}

// -----

// Rank 4 ([B, H, S, d]): operands go back to torch layout around the product.
// CHECK-LABEL: func.func @matmul_rank4
// CHECK:         dghw.matmul %{{.*}}, %{{.*}} {lhs_zp = 3 : i32, rhs_zp = -2 : i32} : (tensor<?x2x5x4xi8>, tensor<?x2x4x5xi8>) -> tensor<?x2x5x5xi32>
// CHECK-NEXT:    dghw.rescale
// CHECK-NOT:     dghw.transpose
// CHECK:         func.return
func.func @matmul_rank4(%a: tensor<?x2x5x4xf32>, %b: tensor<?x2x4x5xf32>) -> tensor<?x2x5x5xf32> {
  %aq = dgq.quantize %a : tensor<?x2x5x4xf32> -> tensor<?x2x5x4x!dgq.uniform<i8:f32, 0.5:3>>
  %bq = dgq.quantize %b : tensor<?x2x4x5xf32> -> tensor<?x2x4x5x!dgq.uniform<i8:f32, 0.25:-2>>
  %sq = dgq.matmul %aq, %bq : (tensor<?x2x5x4x!dgq.uniform<i8:f32, 0.5:3>>, tensor<?x2x4x5x!dgq.uniform<i8:f32, 0.25:-2>>) -> tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.125:1>>
  %sd = dgq.dequantize %sq : tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.125:1>> -> tensor<?x2x5x5xf32>
  func.return %sd : tensor<?x2x5x5xf32>
}

// -----

// LowerNorm: eps = round(n^2 eps / s_in^2 * 2^20) = round(16 * 1e-5 / 0.25 * 2^20) = 671.
// gamma / s_out = [32, 16, -64, 32], beta / s_out = [0, 8, 0, -32]; the largest shift keeping
// |multiplier| = 64 * 2^(shift - 21) below 2^22 (NORM_MULTIPLIER_LIMIT) is 36: multiplier =
// gamma / s_out * 2^15 and bias = beta / s_out * 2^36.
// CHECK-LABEL: func.func @norm_layer
// CHECK-NEXT:    %nd = dghw.norm %x {kind = "layer", input_zp = 3 : i32, output_zp = -2 : i32, eps = 671 : i64, multiplier = array<i32: 1048576, 524288, -2097152, 1048576>, bias = array<i64: 0, 549755813888, 0, -2199023255552>, shift = 36 : i32} : tensor<?x3x4xi8> -> tensor<?x3x4xi8>
// LOC-LABEL: func.func @norm_layer
// LOC:         dghw.norm {{.*}} loc("block.py":7:0)
func.func @norm_layer(%x: tensor<?x3x4xf32>) -> tensor<?x3x4xf32> {
  %xq = dgq.quantize %x : tensor<?x3x4xf32> -> tensor<?x3x4x!dgq.uniform<i8:f32, 0.5:3>>
  %n = dgq.norm %xq {kind = "layer", eps = 1.0e-05 : f64, gamma = array<f64: 1.0, 0.5, -2.0, 1.0>, beta = array<f64: 0.0, 0.25, 0.0, -1.0>} : tensor<?x3x4x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x3x4x!dgq.uniform<i8:f32, 0.03125:-2>> loc("block.py":7:0)
  %nd = dgq.dequantize %n : tensor<?x3x4x!dgq.uniform<i8:f32, 0.03125:-2>> -> tensor<?x3x4xf32>
  func.return %nd : tensor<?x3x4xf32>
}

// -----

// LowerNorm of an rms norm with a tiny eps and weight: n^2 eps / s_in^2 * 2^20 rounds to 0, so
// eps is 1 (D >= 1; a zero row still normalizes to 0 exactly). gamma / s_out = 2^-12: the
// largest shift keeping the multiplier below 2^22 is 54, multiplier = 2^-12 * 2^(54 - 21) = 2^21.
// CHECK-LABEL: func.func @norm_rms_tiny
// CHECK-NEXT:    %nd = dghw.norm %x {kind = "rms", input_zp = 0 : i32, output_zp = 0 : i32, eps = 1 : i64, multiplier = array<i32: 2097152, 2097152>, bias = array<i64: 0, 0>, shift = 54 : i32} : tensor<?x2xi8> -> tensor<?x2xi8>
func.func @norm_rms_tiny(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %xq = dgq.quantize %x : tensor<?x2xf32> -> tensor<?x2x!dgq.uniform<i8:f32, 1.0>>
  %n = dgq.norm %xq {kind = "rms", eps = 1.0e-20 : f64, gamma = array<f64: 0.000244140625, 0.000244140625>, beta = array<f64: 0.0, 0.0>} : tensor<?x2x!dgq.uniform<i8:f32, 1.0>> -> tensor<?x2x!dgq.uniform<i8:f32, 1.0>>
  %nd = dgq.dequantize %n : tensor<?x2x!dgq.uniform<i8:f32, 1.0>> -> tensor<?x2xf32>
  func.return %nd : tensor<?x2xf32>
}
