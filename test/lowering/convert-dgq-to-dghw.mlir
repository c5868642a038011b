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
