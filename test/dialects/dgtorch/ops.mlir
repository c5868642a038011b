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

// Pools: floor and ceil mode (ceil adds the overhanging window), dilation, padding.
// CHECK-LABEL: func.func @pool
func.func @pool(%x: tensor<?x2x5x5xf32>) {
  %m = dgtorch.max_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, ceil_mode = false} : tensor<?x2x5x5xf32> -> tensor<?x2x2x2xf32>
  %mc = dgtorch.max_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, ceil_mode = true} : tensor<?x2x5x5xf32> -> tensor<?x2x3x3xf32>
  %md = dgtorch.max_pool2d %x {kernel = array<i64: 2, 3>, stride = array<i64: 1, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 2, 1>, ceil_mode = false} : tensor<?x2x5x5xf32> -> tensor<?x2x5x3xf32>
  %a = dgtorch.avg_pool2d %x {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, ceil_mode = false, count_include_pad = true} : tensor<?x2x5x5xf32> -> tensor<?x2x3x3xf32>
  %ad = dgtorch.avg_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 1, 0>, ceil_mode = true, count_include_pad = false, divisor_override = 3 : i64} : tensor<?x2x5x5xf32> -> tensor<?x2x3x3xf32>
  %g = dgtorch.adaptive_avg_pool2d %x {output_size = array<i64: 1, 2>} : tensor<?x2x5x5xf32> -> tensor<?x2x1x2xf32>
  func.return
}
// CHECK-NEXT:    %m = dgtorch.max_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, ceil_mode = false} : tensor<?x2x5x5xf32> -> tensor<?x2x2x2xf32>
// CHECK-NEXT:    %mc = dgtorch.max_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, ceil_mode = true} : tensor<?x2x5x5xf32> -> tensor<?x2x3x3xf32>
// CHECK-NEXT:    %md = dgtorch.max_pool2d %x {kernel = array<i64: 2, 3>, stride = array<i64: 1, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 2, 1>, ceil_mode = false} : tensor<?x2x5x5xf32> -> tensor<?x2x5x3xf32>
// CHECK-NEXT:    %a = dgtorch.avg_pool2d %x {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, ceil_mode = false, count_include_pad = true} : tensor<?x2x5x5xf32> -> tensor<?x2x3x3xf32>
// CHECK-NEXT:    %ad = dgtorch.avg_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 1, 0>, ceil_mode = true, count_include_pad = false, divisor_override = 3 : i64} : tensor<?x2x5x5xf32> -> tensor<?x2x3x3xf32>
// CHECK-NEXT:    %g = dgtorch.adaptive_avg_pool2d %x {output_size = array<i64: 1, 2>} : tensor<?x2x5x5xf32> -> tensor<?x2x1x2xf32>
// GENERIC: %m = "dgtorch.max_pool2d"(%x) <{kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, ceil_mode = false}> : (tensor<?x2x5x5xf32>) -> tensor<?x2x2x2xf32>

// CHECK-LABEL: func.func @activation
func.func @activation(%x: tensor<?x10xf32>, %y: tensor<?x3x4xf32>) {
  %s = dgtorch.softmax %x {dim = 1 : i64} : tensor<?x10xf32> -> tensor<?x10xf32>
  %n = dgtorch.softmax %y {dim = -1 : i64} : tensor<?x3x4xf32> -> tensor<?x3x4xf32>
  %g = dgtorch.sigmoid %y : tensor<?x3x4xf32> -> tensor<?x3x4xf32>
  func.return
}
// CHECK-NEXT:    %s = dgtorch.softmax %x {dim = 1 : i64} : tensor<?x10xf32> -> tensor<?x10xf32>
// CHECK-NEXT:    %n = dgtorch.softmax %y {dim = -1 : i64} : tensor<?x3x4xf32> -> tensor<?x3x4xf32>
// CHECK-NEXT:    %g = dgtorch.sigmoid %y : tensor<?x3x4xf32> -> tensor<?x3x4xf32>
// GENERIC: %s = "dgtorch.softmax"(%x) <{dim = 1 : i64}> : (tensor<?x10xf32>) -> tensor<?x10xf32>

// `pad` is in torch order, last axis first; negative entries crop.
// CHECK-LABEL: func.func @pad
func.func @pad(%x: tensor<?x2x5x5xf32>) {
  %p = dgtorch.pad %x {pad = array<i64: 1, 2, 0, 1>, value = 0.0 : f64} : tensor<?x2x5x5xf32> -> tensor<?x2x6x8xf32>
  %w = dgtorch.pad %x {pad = array<i64: -1, 3>, value = -1.5 : f64} : tensor<?x2x5x5xf32> -> tensor<?x2x5x7xf32>
  %c = dgtorch.pad %x {pad = array<i64: 0, 0, 0, 0, 1, 1>, value = 0.0 : f64} : tensor<?x2x5x5xf32> -> tensor<?x4x5x5xf32>
  func.return
}
// CHECK-NEXT:    %p = dgtorch.pad %x {pad = array<i64: 1, 2, 0, 1>, value = 0.000000e+00 : f64} : tensor<?x2x5x5xf32> -> tensor<?x2x6x8xf32>
// CHECK-NEXT:    %w = dgtorch.pad %x {pad = array<i64: -1, 3>, value = -1.500000e+00 : f64} : tensor<?x2x5x5xf32> -> tensor<?x2x5x7xf32>
// CHECK-NEXT:    %c = dgtorch.pad %x {pad = array<i64: 0, 0, 0, 0, 1, 1>, value = 0.000000e+00 : f64} : tensor<?x2x5x5xf32> -> tensor<?x4x5x5xf32>
// GENERIC: %p = "dgtorch.pad"(%x) <{pad = array<i64: 1, 2, 0, 1>, value = 0.000000e+00 : f64}> : (tensor<?x2x5x5xf32>) -> tensor<?x2x6x8xf32>

// CHECK-LABEL: func.func @cat
func.func @cat(%a: tensor<?x2x5x5xf32>, %b: tensor<?x3x5x5xf32>, %c: tensor<?x2x5x1xf32>) {
  %k = dgtorch.cat %a, %b, %a {dim = 1 : i64} : (tensor<?x2x5x5xf32>, tensor<?x3x5x5xf32>, tensor<?x2x5x5xf32>) -> tensor<?x7x5x5xf32>
  %n = dgtorch.cat %a, %c {dim = -1 : i64} : (tensor<?x2x5x5xf32>, tensor<?x2x5x1xf32>) -> tensor<?x2x5x6xf32>
  %o = dgtorch.cat %c {dim = 3 : i64} : (tensor<?x2x5x1xf32>) -> tensor<?x2x5x1xf32>
  func.return
}
// CHECK-NEXT:    %k = dgtorch.cat %a, %b, %a {dim = 1 : i64} : (tensor<?x2x5x5xf32>, tensor<?x3x5x5xf32>, tensor<?x2x5x5xf32>) -> tensor<?x7x5x5xf32>
// CHECK-NEXT:    %n = dgtorch.cat %a, %c {dim = -1 : i64} : (tensor<?x2x5x5xf32>, tensor<?x2x5x1xf32>) -> tensor<?x2x5x6xf32>
// CHECK-NEXT:    %o = dgtorch.cat %c {dim = 3 : i64} : (tensor<?x2x5x1xf32>) -> tensor<?x2x5x1xf32>
// GENERIC: %k = "dgtorch.cat"(%a, %b, %a) <{dim = 1 : i64}> : (tensor<?x2x5x5xf32>, tensor<?x3x5x5xf32>, tensor<?x2x5x5xf32>) -> tensor<?x7x5x5xf32>

// CHECK-LABEL: func.func @upsample
func.func @upsample(%x: tensor<?x2x5x5xf32>) {
  %u = dgtorch.upsample_nearest2d %x {mode = "nearest"} : tensor<?x2x5x5xf32> -> tensor<?x2x10x10xf32>
  %e = dgtorch.upsample_nearest2d %x {mode = "nearest-exact"} : tensor<?x2x5x5xf32> -> tensor<?x2x7x3xf32>
  func.return
}
// CHECK-NEXT:    %u = dgtorch.upsample_nearest2d %x {mode = "nearest"} : tensor<?x2x5x5xf32> -> tensor<?x2x10x10xf32>
// CHECK-NEXT:    %e = dgtorch.upsample_nearest2d %x {mode = "nearest-exact"} : tensor<?x2x5x5xf32> -> tensor<?x2x7x3xf32>
// GENERIC: %u = "dgtorch.upsample_nearest2d"(%x) <{mode = "nearest"}> : (tensor<?x2x5x5xf32>) -> tensor<?x2x10x10xf32>

// CHECK-LABEL: func.func @batch_norm
func.func @batch_norm(%x: tensor<?x2x5x5xf32>, %f: tensor<?x2xf32>, %g: tensor<2xf32>, %b: tensor<2xf32>, %m: tensor<2xf32>, %v: tensor<2xf32>) {
  %n = dgtorch.batch_norm %x, %g, %b, %m, %v {eps = 1.0e-05 : f64} : (tensor<?x2x5x5xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2x5x5xf32>
  %l = dgtorch.batch_norm %f, %g, %b, %m, %v {eps = 0.0 : f64} : (tensor<?x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2xf32>
  func.return
}
// CHECK-NEXT:    %n = dgtorch.batch_norm %x, %g, %b, %m, %v {eps = 1.000000e-05 : f64} : (tensor<?x2x5x5xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2x5x5xf32>
// CHECK-NEXT:    %l = dgtorch.batch_norm %f, %g, %b, %m, %v {eps = 0.000000e+00 : f64} : (tensor<?x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2xf32>
// GENERIC: %n = "dgtorch.batch_norm"(%x, %g, %b, %m, %v) <{eps = 1.000000e-05 : f64}> : (tensor<?x2x5x5xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2x5x5xf32>

// CHECK-LABEL: func.func @permute
func.func @permute(%x: tensor<?x2x5x3xf32>) {
  %t = dgtorch.permute %x {dims = array<i64: 0, 2, 3, 1>} : tensor<?x2x5x3xf32> -> tensor<?x5x3x2xf32>
  %n = dgtorch.permute %x {dims = array<i64: 0, -1, 1, 2>} : tensor<?x2x5x3xf32> -> tensor<?x3x2x5xf32>
  func.return
}
// CHECK-NEXT:    %t = dgtorch.permute %x {dims = array<i64: 0, 2, 3, 1>} : tensor<?x2x5x3xf32> -> tensor<?x5x3x2xf32>
// CHECK-NEXT:    %n = dgtorch.permute %x {dims = array<i64: 0, -1, 1, 2>} : tensor<?x2x5x3xf32> -> tensor<?x3x2x5xf32>
// GENERIC: %t = "dgtorch.permute"(%x) <{dims = array<i64: 0, 2, 3, 1>}> : (tensor<?x2x5x3xf32>) -> tensor<?x5x3x2xf32>

// CHECK-LABEL: func.func @transpose_slice
func.func @transpose_slice(%x: tensor<?x5x8xf32>) {
  %t = dgtorch.transpose %x {dim0 = 1 : i64, dim1 = -1 : i64} : tensor<?x5x8xf32> -> tensor<?x8x5xf32>
  %s = dgtorch.slice %x {dim = 2 : i64, start = 1 : i64, end = 8 : i64, step = 3 : i64} : tensor<?x5x8xf32> -> tensor<?x5x3xf32>
  func.return
}
// CHECK-NEXT:    %t = dgtorch.transpose %x {dim0 = 1 : i64, dim1 = -1 : i64} : tensor<?x5x8xf32> -> tensor<?x8x5xf32>
// CHECK-NEXT:    %s = dgtorch.slice %x {dim = 2 : i64, start = 1 : i64, end = 8 : i64, step = 3 : i64} : tensor<?x5x8xf32> -> tensor<?x5x3xf32>
// GENERIC: %t = "dgtorch.transpose"(%x) <{dim0 = 1 : i64, dim1 = -1 : i64}> : (tensor<?x5x8xf32>) -> tensor<?x8x5xf32>

// Integer logic layers on int32 tensors (dg.BitShift, dg.Bitwise, repeat inside them).
// CHECK-LABEL: func.func @logic
func.func @logic(%x: tensor<?x3xi32>) {
  %s = dgtorch.bitwise_shift %x {direction = "left", shift = 3 : i64} : tensor<?x3xi32> -> tensor<?x3xi32>
  %b = dgtorch.bitwise %x {kind = "xor", value = -1 : i64} : tensor<?x3xi32> -> tensor<?x3xi32>
  %r = dgtorch.repeat %x {repeats = array<i64: 1, 4>} : tensor<?x3xi32> -> tensor<?x12xi32>
  %c = dgtorch.compare %x {kind = "ne", value = 0 : i64} : tensor<?x3xi32> -> tensor<?x3xi32>
  func.return
}
// CHECK-NEXT:    %s = dgtorch.bitwise_shift %x {direction = "left", shift = 3 : i64} : tensor<?x3xi32> -> tensor<?x3xi32>
// CHECK-NEXT:    %b = dgtorch.bitwise %x {kind = "xor", value = -1 : i64} : tensor<?x3xi32> -> tensor<?x3xi32>
// CHECK-NEXT:    %r = dgtorch.repeat %x {repeats = array<i64: 1, 4>} : tensor<?x3xi32> -> tensor<?x12xi32>
// CHECK-NEXT:    %c = dgtorch.compare %x {kind = "ne", value = 0 : i64} : tensor<?x3xi32> -> tensor<?x3xi32>
// GENERIC: %s = "dgtorch.bitwise_shift"(%x) <{direction = "left", shift = 3 : i64}> : (tensor<?x3xi32>) -> tensor<?x3xi32>

// Logic layers on two tensors of one element type and shape (dg.Bitwise(kind), dg.Compare(kind)).
// CHECK-LABEL: func.func @logic_tensors
func.func @logic_tensors(%x: tensor<?x3xi32>, %y: tensor<?x3xi32>) {
  %a = dgtorch.bitwise_tensor %x, %y {kind = "and"} : (tensor<?x3xi32>, tensor<?x3xi32>) -> tensor<?x3xi32>
  %o = dgtorch.bitwise_tensor %x, %y {kind = "or"} : (tensor<?x3xi32>, tensor<?x3xi32>) -> tensor<?x3xi32>
  %e = dgtorch.bitwise_tensor %x, %y {kind = "xor"} : (tensor<?x3xi32>, tensor<?x3xi32>) -> tensor<?x3xi32>
  %c = dgtorch.compare_tensor %x, %y {kind = "le"} : (tensor<?x3xi32>, tensor<?x3xi32>) -> tensor<?x3xi32>
  func.return
}
// CHECK-NEXT:    %a = dgtorch.bitwise_tensor %x, %y {kind = "and"} : (tensor<?x3xi32>, tensor<?x3xi32>) -> tensor<?x3xi32>
// CHECK-NEXT:    %o = dgtorch.bitwise_tensor %x, %y {kind = "or"} : (tensor<?x3xi32>, tensor<?x3xi32>) -> tensor<?x3xi32>
// CHECK-NEXT:    %e = dgtorch.bitwise_tensor %x, %y {kind = "xor"} : (tensor<?x3xi32>, tensor<?x3xi32>) -> tensor<?x3xi32>
// CHECK-NEXT:    %c = dgtorch.compare_tensor %x, %y {kind = "le"} : (tensor<?x3xi32>, tensor<?x3xi32>) -> tensor<?x3xi32>
// GENERIC: %a = "dgtorch.bitwise_tensor"(%x, %y) <{kind = "and"}> : (tensor<?x3xi32>, tensor<?x3xi32>) -> tensor<?x3xi32>
// GENERIC: %c = "dgtorch.compare_tensor"(%x, %y) <{kind = "le"}> : (tensor<?x3xi32>, tensor<?x3xi32>) -> tensor<?x3xi32>

// CHECK-LABEL: func.func @mul_constant
func.func @mul_constant(%x: tensor<?x5x8xf32>, %c: tensor<5x8xf32>, %r: tensor<1x1x8xf32>) {
  %m = dgtorch.mul %x, %c : (tensor<?x5x8xf32>, tensor<5x8xf32>) -> tensor<?x5x8xf32>
  %n = dgtorch.mul %x, %r : (tensor<?x5x8xf32>, tensor<1x1x8xf32>) -> tensor<?x5x8xf32>
  func.return
}
// CHECK-NEXT:    %m = dgtorch.mul %x, %c : (tensor<?x5x8xf32>, tensor<5x8xf32>) -> tensor<?x5x8xf32>
// CHECK-NEXT:    %n = dgtorch.mul %x, %r : (tensor<?x5x8xf32>, tensor<1x1x8xf32>) -> tensor<?x5x8xf32>
// GENERIC: %m = "dgtorch.mul"(%x, %c) : (tensor<?x5x8xf32>, tensor<5x8xf32>) -> tensor<?x5x8xf32>

// CHECK-LABEL: func.func @matmul_scale
func.func @matmul_scale(%q: tensor<?x2x5x4xf32>, %k: tensor<?x2x4x5xf32>) {
  %s = dgtorch.matmul %q, %k : (tensor<?x2x5x4xf32>, tensor<?x2x4x5xf32>) -> tensor<?x2x5x5xf32>
  %t = dgtorch.mul_scalar %s {factor = 5.000000e-01 : f64} : tensor<?x2x5x5xf32> -> tensor<?x2x5x5xf32>
  func.return
}
// CHECK-NEXT:    %s = dgtorch.matmul %q, %k : (tensor<?x2x5x4xf32>, tensor<?x2x4x5xf32>) -> tensor<?x2x5x5xf32>
// CHECK-NEXT:    %t = dgtorch.mul_scalar %s {factor = 5.000000e-01 : f64} : tensor<?x2x5x5xf32> -> tensor<?x2x5x5xf32>
// GENERIC: %t = "dgtorch.mul_scalar"(%s) <{factor = 5.000000e-01 : f64}> : (tensor<?x2x5x5xf32>) -> tensor<?x2x5x5xf32>

// The body of a dg.Norm: a layer norm with a bias, an rms norm without.
// CHECK-LABEL: func.func @norm
func.func @norm(%x: tensor<?x5x4xf32>, %w: tensor<4xf32>, %b: tensor<4xf32>) {
  %l = dgtorch.norm %x, %w, %b {kind = "layer", eps = 1.0e-05 : f64} : (tensor<?x5x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x5x4xf32>
  %r = dgtorch.norm %x, %w {kind = "rms", eps = 1.0e-06 : f64} : (tensor<?x5x4xf32>, tensor<4xf32>) -> tensor<?x5x4xf32>
  func.return
}
// CHECK-NEXT:    %l = dgtorch.norm %x, %w, %b {kind = "layer", eps = 1.000000e-05 : f64} : (tensor<?x5x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x5x4xf32>
// CHECK-NEXT:    %r = dgtorch.norm %x, %w {kind = "rms", eps = 1.000000e-06 : f64} : (tensor<?x5x4xf32>, tensor<4xf32>) -> tensor<?x5x4xf32>
// GENERIC: %r = "dgtorch.norm"(%x, %w) <{kind = "rms", eps = 1.000000e-06 : f64}> : (tensor<?x5x4xf32>, tensor<4xf32>) -> tensor<?x5x4xf32>
