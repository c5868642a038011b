// dg-pipeline: dgtorch (as convert_pt2e leaves it) all the way to dghw, and its target_version.
// RUN: dg-opt %s -p dg-pipeline | filecheck %s
// RUN: dg-opt %s -p 'dg-pipeline{target-version="0.14.0"}' | filecheck %s
// RUN: dg-opt %s -p dg-pipeline --print-debuginfo | filecheck %s --check-prefix=LOC
// RUN: not dg-opt %s -p 'dg-pipeline{target-version="0.16.0"}' 2>&1 | filecheck %s --check-prefix=NEWER
// RUN: not dg-opt %s -p 'dg-pipeline{target-version="v1"}' 2>&1 | filecheck %s --check-prefix=INVALID

// NEWER:   error: pass 'dg-pipeline' failed: dg-pipeline: target_version 0.16.0 is newer than this compiler (dg 0.15.0)
// INVALID: error: pass 'dg-pipeline' failed: dg-pipeline: invalid target_version 'v1': expected MAJOR.MINOR.PATCH, e.g. 0.15.0

// conv+relu -> conv -> residual add+relu -> flatten -> linear.
// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%x: tensor<?x1x4x4xi8> {dghw.scale = 5.000000e-01 : f64, dghw.zero_point = 3 : i32})
// CHECK-SAME:    -> (tensor<?x3xi8> {dghw.scale = 1.250000e-01 : f64, dghw.zero_point = 0 : i32})
// CHECK-NEXT:    %[[X:.*]] = dghw.transpose %x {perm = array<i64: 0, 2, 3, 1>} : tensor<?x1x4x4xi8> -> tensor<?x4x4x1xi8>
// CHECK-NEXT:    %[[W1:.*]] = dghw.constant {{.*}} : tensor<2x3x3x1xi8>
// CHECK-NEXT:    %[[B1:.*]] = dghw.constant {value = dense<[16, -16]> : tensor<2xi32>}
// CHECK-NEXT:    %[[ACC1:.*]] = dghw.conv2d %[[X]], %[[W1]], %[[B1]] {stride = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, input_zp = 3 : i32, weight_zp = 0 : i32} : (tensor<?x4x4x1xi8>, tensor<2x3x3x1xi8>, tensor<2xi32>) -> tensor<?x4x4x2xi32>
// CHECK-NEXT:    %[[C1:.*]] = dghw.rescale %[[ACC1]] {{.*}} output_zp = -128 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32} : tensor<?x4x4x2xi32> -> tensor<?x4x4x2xi8>
// CHECK-NEXT:    %[[W2:.*]] = dghw.constant {{.*}} : tensor<2x1x1x2xi8>
// CHECK-NEXT:    %[[B2:.*]] = dghw.constant {value = dense<0> : tensor<2xi32>}
// CHECK-NEXT:    %[[ACC2:.*]] = dghw.conv2d %[[C1]], %[[W2]], %[[B2]] {stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, input_zp = -128 : i32, weight_zp = 0 : i32}
// CHECK-NEXT:    %[[C2:.*]] = dghw.rescale %[[ACC2]] {{.*}} output_zp = 0 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32}
// CHECK-NEXT:    %[[L:.*]] = dghw.rescale %[[C2]] {{.*}} -> tensor<?x4x4x2xi32>
// CHECK-NEXT:    %[[R:.*]] = dghw.rescale %[[C1]] {{.*}} -> tensor<?x4x4x2xi32>
// CHECK-NEXT:    %[[SUM:.*]] = dghw.add %[[L]], %[[R]]
// CHECK-NEXT:    %[[S:.*]] = dghw.rescale %[[SUM]] {{.*}} output_zp = -128 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32} : tensor<?x4x4x2xi32> -> tensor<?x4x4x2xi8>
// CHECK-NEXT:    %[[B3:.*]] = dghw.constant {value = dense<0> : tensor<3xi32>}
// CHECK-NEXT:    %[[FLAT:.*]] = dghw.reshape %[[S]] : tensor<?x4x4x2xi8> -> tensor<?x32xi8>
// CHECK-NEXT:    %[[W3:.*]] = dghw.constant {{.*}} : tensor<3x32xi8>
// CHECK-NEXT:    %[[ACC3:.*]] = dghw.fully_connected %[[FLAT]], %[[W3]], %[[B3]] {input_zp = -128 : i32, weight_zp = 0 : i32}
// CHECK-NEXT:    %[[Y:.*]] = dghw.rescale %[[ACC3]] {{.*}} -> tensor<?x3xi8>
// CHECK-NEXT:    func.return %[[Y]] : tensor<?x3xi8>
// LOC:         dghw.conv2d {{.*}} loc("net.py":10:0)
// LOC:         dghw.conv2d {{.*}} loc("net.py":11:0)
// LOC:         dghw.add {{.*}} loc("net.py":12:0)
// LOC:         dghw.reshape {{.*}} loc("net.py":13:0)
// LOC:         dghw.fully_connected {{.*}} loc("net.py":14:0)
func.func @main(%x: tensor<?x1x4x4xf32>) -> tensor<?x3xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x4xf32> -> tensor<?x1x4x4xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x4xi8> -> tensor<?x1x4x4xf32>
  %w1 = dgtorch.constant {value = dense<[[[[1, 2, 3], [4, 5, 6], [7, 8, 9]]], [[[-1, -2, -3], [-4, -5, -6], [-7, -8, -9]]]]> : tensor<2x1x3x3xi8>} : tensor<2x1x3x3xi8>
  %w1d = dgtorch.dequantize_per_channel %w1 {scales = array<f64: 0.125, 0.125>, zero_points = array<i64: 0, 0>, axis = 0 : i64, quant_min = -127 : i64, quant_max = 127 : i64} : tensor<2x1x3x3xi8> -> tensor<2x1x3x3xf32>
  %b1 = dgtorch.constant {value = dense<[16, -16]> : tensor<2xi32>} : tensor<2xi32>
  %b1d = dgtorch.dequantize_per_channel %b1 {scales = array<f64: 0.0625, 0.0625>, zero_points = array<i64: 0, 0>, axis = 0 : i64, quant_min = -2147483648 : i64, quant_max = 2147483647 : i64} : tensor<2xi32> -> tensor<2xf32>
  %c1 = dgtorch.conv2d %xd, %w1d, %b1d {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<?x1x4x4xf32>, tensor<2x1x3x3xf32>, tensor<2xf32>) -> tensor<?x2x4x4xf32> loc("net.py":10:0)
  %r1 = dgtorch.relu %c1 : tensor<?x2x4x4xf32> -> tensor<?x2x4x4xf32>
  %r1q = dgtorch.quantize_per_tensor %r1 {scale = 0.25 : f64, zero_point = -128 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x4x4xf32> -> tensor<?x2x4x4xi8>
  %r1d = dgtorch.dequantize_per_tensor %r1q {scale = 0.25 : f64, zero_point = -128 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x4x4xi8> -> tensor<?x2x4x4xf32>
  %w2 = dgtorch.constant {value = dense<[[[[3]], [[-2]]], [[[1]], [[5]]]]> : tensor<2x2x1x1xi8>} : tensor<2x2x1x1xi8>
  %w2d = dgtorch.dequantize_per_channel %w2 {scales = array<f64: 0.25, 0.125>, zero_points = array<i64: 0, 0>, axis = 0 : i64, quant_min = -127 : i64, quant_max = 127 : i64} : tensor<2x2x1x1xi8> -> tensor<2x2x1x1xf32>
  %c2 = dgtorch.conv2d %r1d, %w2d {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<?x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<?x2x4x4xf32> loc("net.py":11:0)
  %c2q = dgtorch.quantize_per_tensor %c2 {scale = 0.25 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x4x4xf32> -> tensor<?x2x4x4xi8>
  %c2d = dgtorch.dequantize_per_tensor %c2q {scale = 0.25 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x4x4xi8> -> tensor<?x2x4x4xf32>
  %s = dgtorch.add %c2d, %r1d : (tensor<?x2x4x4xf32>, tensor<?x2x4x4xf32>) -> tensor<?x2x4x4xf32> loc("net.py":12:0)
  %sr = dgtorch.relu %s : tensor<?x2x4x4xf32> -> tensor<?x2x4x4xf32>
  %sq = dgtorch.quantize_per_tensor %sr {scale = 0.5 : f64, zero_point = -128 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x4x4xf32> -> tensor<?x2x4x4xi8>
  %sd = dgtorch.dequantize_per_tensor %sq {scale = 0.5 : f64, zero_point = -128 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x4x4xi8> -> tensor<?x2x4x4xf32>
  %f = dgtorch.flatten %sd {start_dim = 1 : i64, end_dim = -1 : i64} : tensor<?x2x4x4xf32> -> tensor<?x32xf32> loc("net.py":13:0)
  %w3 = dgtorch.constant {value = dense<1> : tensor<3x32xi8>} : tensor<3x32xi8>
  %w3d = dgtorch.dequantize_per_channel %w3 {scales = array<f64: 0.125, 0.25, 0.5>, zero_points = array<i64: 0, 0, 0>, axis = 0 : i64, quant_min = -127 : i64, quant_max = 127 : i64} : tensor<3x32xi8> -> tensor<3x32xf32>
  %y = dgtorch.linear %f, %w3d : (tensor<?x32xf32>, tensor<3x32xf32>) -> tensor<?x3xf32> loc("net.py":14:0)
  %yq = dgtorch.quantize_per_tensor %y {scale = 0.125 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x3xf32> -> tensor<?x3xi8>
  %yd = dgtorch.dequantize_per_tensor %yq {scale = 0.125 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x3xi8> -> tensor<?x3xf32>
  func.return %yd : tensor<?x3xf32>
}
