// Round trip of every dgtorch op, in custom and in generic form.
// RUN: dg-opt %s | dg-opt | filecheck %s
// RUN: dg-opt %s --print-op-generic | dg-opt | filecheck %s
// RUN: dg-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @quantize
func.func @quantize(%x: tensor<?x1x8x8xf32>, %w: tensor<8x1x3x3xf32>) -> (tensor<?x1x8x8xf32>, tensor<8x1x3x3xf32>) {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.02 : f64, zero_point = -3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x8x8xf32> -> tensor<?x1x8x8xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.02 : f64, zero_point = -3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x8x8xi8> -> tensor<?x1x8x8xf32>
  %wq = dgtorch.quantize_per_channel %w {scales = array<f64: 0.5, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.25>, zero_points = array<i64: 0, 0, 0, 0, 0, 0, 0, 1>, axis = 0 : i64, quant_min = -127 : i64, quant_max = 127 : i64} : tensor<8x1x3x3xf32> -> tensor<8x1x3x3xi8>
  %wd = dgtorch.dequantize_per_channel %wq {scales = array<f64: 0.5, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.25>, zero_points = array<i64: 0, 0, 0, 0, 0, 0, 0, 1>, axis = 0 : i64, quant_min = -127 : i64, quant_max = 127 : i64} : tensor<8x1x3x3xi8> -> tensor<8x1x3x3xf32>
  func.return %xd, %wd : tensor<?x1x8x8xf32>, tensor<8x1x3x3xf32>
}
// CHECK-NEXT:    %xq = dgtorch.quantize_per_tensor %x {scale = 2.000000e-02 : f64, zero_point = -3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x8x8xf32> -> tensor<?x1x8x8xi8>
// CHECK-NEXT:    %xd = dgtorch.dequantize_per_tensor %xq {scale = 2.000000e-02 : f64, zero_point = -3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x8x8xi8> -> tensor<?x1x8x8xf32>
// CHECK-NEXT:    %wq = dgtorch.quantize_per_channel %w {scales = array<f64: 5.000000e-01, 5.000000e-01, 5.000000e-01, 5.000000e-01, 2.500000e-01, 2.500000e-01, 2.500000e-01, 2.500000e-01>, zero_points = array<i64: 0, 0, 0, 0, 0, 0, 0, 1>, axis = 0 : i64, quant_min = -127 : i64, quant_max = 127 : i64} : tensor<8x1x3x3xf32> -> tensor<8x1x3x3xi8>
// CHECK-NEXT:    %wd = dgtorch.dequantize_per_channel %wq {scales = array<f64: 5.000000e-01, 5.000000e-01, 5.000000e-01, 5.000000e-01, 2.500000e-01, 2.500000e-01, 2.500000e-01, 2.500000e-01>, zero_points = array<i64: 0, 0, 0, 0, 0, 0, 0, 1>, axis = 0 : i64, quant_min = -127 : i64, quant_max = 127 : i64} : tensor<8x1x3x3xi8> -> tensor<8x1x3x3xf32>
// CHECK-NEXT:    func.return %xd, %wd : tensor<?x1x8x8xf32>, tensor<8x1x3x3xf32>

// Properties are properties, not discardable attributes, in the generic form.
// GENERIC: "dgtorch.quantize_per_tensor"(%x) <{scale = 2.000000e-02 : f64, zero_point = -3 : i64, quant_min = -128 : i64, quant_max = 127 : i64}> : (tensor<?x1x8x8xf32>) -> tensor<?x1x8x8xi8>

// CHECK-LABEL: func.func @constant
func.func @constant() -> (tensor<2x2xi8>, tensor<3xf32>, tensor<4xi32>) {
  %a = dgtorch.constant {value = dense<[[1, -2], [3, -128]]> : tensor<2x2xi8>} : tensor<2x2xi8>
  %b = dgtorch.constant {value = dense<[0.5, -1.0, 2.0]> : tensor<3xf32>} : tensor<3xf32>
  %c = dgtorch.constant {value = dense<7> : tensor<4xi32>} : tensor<4xi32>
  func.return %a, %b, %c : tensor<2x2xi8>, tensor<3xf32>, tensor<4xi32>
}
// CHECK-NEXT:    %a = dgtorch.constant {value = dense<{{\[}}[1, -2], [3, -128]]> : tensor<2x2xi8>} : tensor<2x2xi8>
// CHECK-NEXT:    %b = dgtorch.constant {value = dense<[5.000000e-01, -1.000000e+00, 2.000000e+00]> : tensor<3xf32>} : tensor<3xf32>
// CHECK-NEXT:    %c = dgtorch.constant {value = dense<7> : tensor<4xi32>} : tensor<4xi32>
// GENERIC: %a = "dgtorch.constant"() <{value = dense<{{\[}}[1, -2], [3, -128]]> : tensor<2x2xi8>}> : () -> tensor<2x2xi8>

// CHECK-LABEL: func.func @conv2d
func.func @conv2d(%x: tensor<?x2x8x8xf32>, %w: tensor<4x2x3x3xf32>, %b: tensor<4xf32>, %wg: tensor<4x1x3x3xf32>) -> (tensor<?x4x6x6xf32>, tensor<?x4x3x2xf32>, tensor<?x4x4x4xf32>) {
  %dense = dgtorch.conv2d %x, %w, %b {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<?x2x8x8xf32>, tensor<4x2x3x3xf32>, tensor<4xf32>) -> tensor<?x4x6x6xf32>
  %strided = dgtorch.conv2d %x, %w {stride = array<i64: 3, 2>, padding = array<i64: 1, 0>, dilation = array<i64: 1, 2>, groups = 1 : i64} : (tensor<?x2x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<?x4x3x2xf32>
  %grouped = dgtorch.conv2d %x, %wg, %b {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 2 : i64} : (tensor<?x2x8x8xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>) -> tensor<?x4x4x4xf32>
  func.return %dense, %strided, %grouped : tensor<?x4x6x6xf32>, tensor<?x4x3x2xf32>, tensor<?x4x4x4xf32>
}
// CHECK-NEXT:    %dense = dgtorch.conv2d %x, %w, %b {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<?x2x8x8xf32>, tensor<4x2x3x3xf32>, tensor<4xf32>) -> tensor<?x4x6x6xf32>
// CHECK-NEXT:    %strided = dgtorch.conv2d %x, %w {stride = array<i64: 3, 2>, padding = array<i64: 1, 0>, dilation = array<i64: 1, 2>, groups = 1 : i64} : (tensor<?x2x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<?x4x3x2xf32>
// CHECK-NEXT:    %grouped = dgtorch.conv2d %x, %wg, %b {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 2 : i64} : (tensor<?x2x8x8xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>) -> tensor<?x4x4x4xf32>
// GENERIC: %strided = "dgtorch.conv2d"(%x, %w) <{stride = array<i64: 3, 2>, padding = array<i64: 1, 0>, dilation = array<i64: 1, 2>, groups = 1 : i64}> : (tensor<?x2x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<?x4x3x2xf32>

// CHECK-LABEL: func.func @linear
func.func @linear(%x: tensor<?x16xf32>, %x3: tensor<?x5x16xf32>, %w: tensor<10x16xf32>, %b: tensor<10xf32>) -> (tensor<?x10xf32>, tensor<?x5x10xf32>) {
  %y = dgtorch.linear %x, %w, %b : (tensor<?x16xf32>, tensor<10x16xf32>, tensor<10xf32>) -> tensor<?x10xf32>
  %y3 = dgtorch.linear %x3, %w : (tensor<?x5x16xf32>, tensor<10x16xf32>) -> tensor<?x5x10xf32>
  func.return %y, %y3 : tensor<?x10xf32>, tensor<?x5x10xf32>
}
// CHECK-NEXT:    %y = dgtorch.linear %x, %w, %b : (tensor<?x16xf32>, tensor<10x16xf32>, tensor<10xf32>) -> tensor<?x10xf32>
// CHECK-NEXT:    %y3 = dgtorch.linear %x3, %w : (tensor<?x5x16xf32>, tensor<10x16xf32>) -> tensor<?x5x10xf32>

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%a: tensor<?x4x2x2xf32>, %b: tensor<?x4x2x2xf32>) -> tensor<?x4x2x2xf32> {
  %r = dgtorch.relu %a : tensor<?x4x2x2xf32> -> tensor<?x4x2x2xf32>
  %s = dgtorch.add %r, %b : (tensor<?x4x2x2xf32>, tensor<?x4x2x2xf32>) -> tensor<?x4x2x2xf32>
  func.return %s : tensor<?x4x2x2xf32>
}
// CHECK-NEXT:    %r = dgtorch.relu %a : tensor<?x4x2x2xf32> -> tensor<?x4x2x2xf32>
// CHECK-NEXT:    %s = dgtorch.add %r, %b : (tensor<?x4x2x2xf32>, tensor<?x4x2x2xf32>) -> tensor<?x4x2x2xf32>

// CHECK-LABEL: func.func @shape
func.func @shape(%x: tensor<?x4x2x3xf32>, %q: tensor<?x4x2x3xi8>) -> (tensor<?x24xf32>, tensor<?x8x3xf32>, tensor<?x2x12xi8>) {
  %f = dgtorch.flatten %x {start_dim = 1 : i64, end_dim = -1 : i64} : tensor<?x4x2x3xf32> -> tensor<?x24xf32>
  %g = dgtorch.flatten %x {start_dim = 1 : i64, end_dim = 2 : i64} : tensor<?x4x2x3xf32> -> tensor<?x8x3xf32>
  %r = dgtorch.reshape %q : tensor<?x4x2x3xi8> -> tensor<?x2x12xi8>
  func.return %f, %g, %r : tensor<?x24xf32>, tensor<?x8x3xf32>, tensor<?x2x12xi8>
}
// CHECK-NEXT:    %f = dgtorch.flatten %x {start_dim = 1 : i64, end_dim = -1 : i64} : tensor<?x4x2x3xf32> -> tensor<?x24xf32>
// CHECK-NEXT:    %g = dgtorch.flatten %x {start_dim = 1 : i64, end_dim = 2 : i64} : tensor<?x4x2x3xf32> -> tensor<?x8x3xf32>
// CHECK-NEXT:    %r = dgtorch.reshape %q : tensor<?x4x2x3xi8> -> tensor<?x2x12xi8>
// GENERIC: %f = "dgtorch.flatten"(%x) <{start_dim = 1 : i64, end_dim = -1 : i64}> : (tensor<?x4x2x3xf32>) -> tensor<?x24xf32>
