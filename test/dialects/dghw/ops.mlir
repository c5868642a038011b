// Round trip of every dghw op, in custom and in generic form.
// RUN: dg-opt %s | dg-opt | filecheck %s
// RUN: dg-opt %s --print-op-generic | dg-opt | filecheck %s
// RUN: dg-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// The host-side quantization of arguments and results are argument/result attributes.
// CHECK-LABEL: func.func @main(%x: tensor<?x1x4x4xi8> {dghw.scale = 5.000000e-01 : f64, dghw.zero_point = -3 : i32}) -> (tensor<?x1x4x4xi8> {dghw.scale = 1.000000e-03 : f64, dghw.zero_point = 5 : i32})
func.func @main(%x: tensor<?x1x4x4xi8> {dghw.scale = 0.5 : f64, dghw.zero_point = -3 : i32}) -> (tensor<?x1x4x4xi8> {dghw.scale = 0.001 : f64, dghw.zero_point = 5 : i32}) {
  %t = dghw.transpose %x {perm = array<i64: 0, 2, 3, 1>} : tensor<?x1x4x4xi8> -> tensor<?x4x4x1xi8>
  %back = dghw.transpose %t {perm = array<i64: 0, 3, 1, 2>} : tensor<?x4x4x1xi8> -> tensor<?x1x4x4xi8>
  func.return %back : tensor<?x1x4x4xi8>
}
// CHECK-NEXT:    %t = dghw.transpose %x {perm = array<i64: 0, 2, 3, 1>} : tensor<?x1x4x4xi8> -> tensor<?x4x4x1xi8>
// CHECK-NEXT:    %back = dghw.transpose %t {perm = array<i64: 0, 3, 1, 2>} : tensor<?x4x4x1xi8> -> tensor<?x1x4x4xi8>
// GENERIC: %t = "dghw.transpose"(%x) <{perm = array<i64: 0, 2, 3, 1>}> : (tensor<?x1x4x4xi8>) -> tensor<?x4x4x1xi8>

// CHECK-LABEL: func.func @constant
func.func @constant() -> (tensor<2x1x1x2xi8>, tensor<2xi32>) {
  %w = dghw.constant {value = dense<[[[[1, -128]]], [[[127, 0]]]]> : tensor<2x1x1x2xi8>} : tensor<2x1x1x2xi8>
  %b = dghw.constant {value = dense<[2147483647, -2147483648]> : tensor<2xi32>} : tensor<2xi32>
  func.return %w, %b : tensor<2x1x1x2xi8>, tensor<2xi32>
}
// CHECK-NEXT:    %w = dghw.constant {value = dense<{{\[\[\[\[}}1, -128]]], {{\[\[\[}}127, 0]]]]> : tensor<2x1x1x2xi8>} : tensor<2x1x1x2xi8>
// CHECK-NEXT:    %b = dghw.constant {value = dense<[2147483647, -2147483648]> : tensor<2xi32>} : tensor<2xi32>
// GENERIC: %b = "dghw.constant"() <{value = dense<[2147483647, -2147483648]> : tensor<2xi32>}> : () -> tensor<2xi32>

// CHECK-LABEL: func.func @conv2d
func.func @conv2d(%x: tensor<?x4x4x1xi8>, %w: tensor<2x3x3x1xi8>, %b: tensor<2xi32>) {
  %acc = dghw.conv2d %x, %w, %b {stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, input_zp = -3 : i32, weight_zp = 0 : i32} : (tensor<?x4x4x1xi8>, tensor<2x3x3x1xi8>, tensor<2xi32>) -> tensor<?x2x2x2xi32>
  %pad = dghw.conv2d %x, %w, %b {stride = array<i64: 2, 1>, pad = array<i64: 1, 0, 1, 2>, input_zp = 127 : i32, weight_zp = -128 : i32} : (tensor<?x4x4x1xi8>, tensor<2x3x3x1xi8>, tensor<2xi32>) -> tensor<?x2x5x2xi32>
  func.return
}
// CHECK-NEXT:    %acc = dghw.conv2d %x, %w, %b {stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, input_zp = -3 : i32, weight_zp = 0 : i32} : (tensor<?x4x4x1xi8>, tensor<2x3x3x1xi8>, tensor<2xi32>) -> tensor<?x2x2x2xi32>
// CHECK-NEXT:    %pad = dghw.conv2d %x, %w, %b {stride = array<i64: 2, 1>, pad = array<i64: 1, 0, 1, 2>, input_zp = 127 : i32, weight_zp = -128 : i32} : (tensor<?x4x4x1xi8>, tensor<2x3x3x1xi8>, tensor<2xi32>) -> tensor<?x2x5x2xi32>
// GENERIC: %acc = "dghw.conv2d"(%x, %w, %b) <{stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, input_zp = -3 : i32, weight_zp = 0 : i32}>

// CHECK-LABEL: func.func @fully_connected
func.func @fully_connected(%x: tensor<?x8xi8>, %x3: tensor<?x2x8xi8>, %w: tensor<3x8xi8>, %b: tensor<3xi32>) {
  %y = dghw.fully_connected %x, %w, %b {input_zp = 5 : i32, weight_zp = 0 : i32} : (tensor<?x8xi8>, tensor<3x8xi8>, tensor<3xi32>) -> tensor<?x3xi32>
  %y3 = dghw.fully_connected %x3, %w, %b {input_zp = 0 : i32, weight_zp = 0 : i32} : (tensor<?x2x8xi8>, tensor<3x8xi8>, tensor<3xi32>) -> tensor<?x2x3xi32>
  func.return
}
// CHECK-NEXT:    %y = dghw.fully_connected %x, %w, %b {input_zp = 5 : i32, weight_zp = 0 : i32} : (tensor<?x8xi8>, tensor<3x8xi8>, tensor<3xi32>) -> tensor<?x3xi32>
// CHECK-NEXT:    %y3 = dghw.fully_connected %x3, %w, %b {input_zp = 0 : i32, weight_zp = 0 : i32} : (tensor<?x2x8xi8>, tensor<3x8xi8>, tensor<3xi32>) -> tensor<?x2x3xi32>

// Rescale: one multiplier/shift per tensor or per channel of the last axis; i32 <-> i8 both ways.
// CHECK-LABEL: func.func @rescale
func.func @rescale(%acc: tensor<?x2x2x2xi32>, %q: tensor<?x2x2x2xi8>) {
  %pc = dghw.rescale %acc {multiplier = array<i32: 1073741824, 2147483647>, shift = array<i32: 2, 62>, input_zp = 0 : i32, output_zp = 1 : i32, clamp_min = 1 : i32, clamp_max = 127 : i32} : tensor<?x2x2x2xi32> -> tensor<?x2x2x2xi8>
  %up = dghw.rescale %q {multiplier = array<i32: 1073741824>, shift = array<i32: 30>, input_zp = -128 : i32, output_zp = 0 : i32, clamp_min = -2147483648 : i32, clamp_max = 2147483647 : i32} : tensor<?x2x2x2xi8> -> tensor<?x2x2x2xi32>
  func.return
}
// CHECK-NEXT:    %pc = dghw.rescale %acc {multiplier = array<i32: 1073741824, 2147483647>, shift = array<i32: 2, 62>, input_zp = 0 : i32, output_zp = 1 : i32, clamp_min = 1 : i32, clamp_max = 127 : i32} : tensor<?x2x2x2xi32> -> tensor<?x2x2x2xi8>
// CHECK-NEXT:    %up = dghw.rescale %q {multiplier = array<i32: 1073741824>, shift = array<i32: 30>, input_zp = -128 : i32, output_zp = 0 : i32, clamp_min = -2147483648 : i32, clamp_max = 2147483647 : i32} : tensor<?x2x2x2xi8> -> tensor<?x2x2x2xi32>
// GENERIC: %pc = "dghw.rescale"(%acc) <{multiplier = array<i32: 1073741824, 2147483647>, shift = array<i32: 2, 62>, input_zp = 0 : i32, output_zp = 1 : i32, clamp_min = 1 : i32, clamp_max = 127 : i32}>

// CHECK-LABEL: func.func @add
func.func @add(%a: tensor<?x4xi32>, %b: tensor<?x4xi32>) -> tensor<?x4xi32> {
  %s = dghw.add %a, %b : (tensor<?x4xi32>, tensor<?x4xi32>) -> tensor<?x4xi32>
  func.return %s : tensor<?x4xi32>
}
// CHECK-NEXT:    %s = dghw.add %a, %b : (tensor<?x4xi32>, tensor<?x4xi32>) -> tensor<?x4xi32>

// CHECK-LABEL: func.func @reshape
func.func @reshape(%x: tensor<?x2x2x2xi8>, %a: tensor<?x6xi32>) {
  %f = dghw.reshape %x : tensor<?x2x2x2xi8> -> tensor<?x8xi8>
  %g = dghw.reshape %a : tensor<?x6xi32> -> tensor<?x3x2xi32>
  func.return
}
// CHECK-NEXT:    %f = dghw.reshape %x : tensor<?x2x2x2xi8> -> tensor<?x8xi8>
// CHECK-NEXT:    %g = dghw.reshape %a : tensor<?x6xi32> -> tensor<?x3x2xi32>
// GENERIC: %f = "dghw.reshape"(%x) : (tensor<?x2x2x2xi8>) -> tensor<?x8xi8>

// Depthwise weight is [KH, KW, C]; the bias has one entry per channel.
// CHECK-LABEL: func.func @depthwise
func.func @depthwise(%x: tensor<?x5x5x2xi8>, %w: tensor<3x3x2xi8>, %b: tensor<2xi32>) {
  %d = dghw.depthwise_conv2d %x, %w, %b {stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>, input_zp = -3 : i32, weight_zp = 0 : i32} : (tensor<?x5x5x2xi8>, tensor<3x3x2xi8>, tensor<2xi32>) -> tensor<?x3x3x2xi32>
  %s = dghw.depthwise_conv2d %x, %w, %b {stride = array<i64: 1, 2>, pad = array<i64: 0, 0, 1, 0>, input_zp = 0 : i32, weight_zp = 0 : i32} : (tensor<?x5x5x2xi8>, tensor<3x3x2xi8>, tensor<2xi32>) -> tensor<?x3x2x2xi32>
  func.return
}
// CHECK-NEXT:    %d = dghw.depthwise_conv2d %x, %w, %b {stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>, input_zp = -3 : i32, weight_zp = 0 : i32} : (tensor<?x5x5x2xi8>, tensor<3x3x2xi8>, tensor<2xi32>) -> tensor<?x3x3x2xi32>
// CHECK-NEXT:    %s = dghw.depthwise_conv2d %x, %w, %b {stride = array<i64: 1, 2>, pad = array<i64: 0, 0, 1, 0>, input_zp = 0 : i32, weight_zp = 0 : i32} : (tensor<?x5x5x2xi8>, tensor<3x3x2xi8>, tensor<2xi32>) -> tensor<?x3x2x2xi32>
// GENERIC: %d = "dghw.depthwise_conv2d"(%x, %w, %b) <{stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>, input_zp = -3 : i32, weight_zp = 0 : i32}> : (tensor<?x5x5x2xi8>, tensor<3x3x2xi8>, tensor<2xi32>) -> tensor<?x3x3x2xi32>

// The window count may be the floor or the ceil one.
// CHECK-LABEL: func.func @pool
func.func @pool(%x: tensor<?x5x5x2xi8>) {
  %m = dghw.max_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>} : tensor<?x5x5x2xi8> -> tensor<?x2x3x2xi8>
  %a = dghw.avg_pool2d %x {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>, count_include_pad = false, input_zp = -3 : i32, output_zp = 5 : i32} : tensor<?x5x5x2xi8> -> tensor<?x3x3x2xi8>
  %o = dghw.avg_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 1, 0>, count_include_pad = true, divisor_override = 3 : i64, input_zp = 0 : i32, output_zp = 0 : i32} : tensor<?x5x5x2xi8> -> tensor<?x3x3x2xi8>
  func.return
}
// CHECK-NEXT:    %m = dghw.max_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>} : tensor<?x5x5x2xi8> -> tensor<?x2x3x2xi8>
// CHECK-NEXT:    %a = dghw.avg_pool2d %x {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>, count_include_pad = false, input_zp = -3 : i32, output_zp = 5 : i32} : tensor<?x5x5x2xi8> -> tensor<?x3x3x2xi8>
// CHECK-NEXT:    %o = dghw.avg_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 1, 0>, count_include_pad = true, divisor_override = 3 : i64, input_zp = 0 : i32, output_zp = 0 : i32} : tensor<?x5x5x2xi8> -> tensor<?x3x3x2xi8>
// GENERIC: %m = "dghw.max_pool2d"(%x) <{kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>}> : (tensor<?x5x5x2xi8>) -> tensor<?x2x3x2xi8>

// Tables have 256 entries: table[x + 128] for x in [-128, 127].
// CHECK-LABEL: func.func @lookup
func.func @lookup(%v: tensor<?x4xi8>, %y: tensor<?x3x4xi8>) {
  %t = dghw.table %v {table = array<i8: -128, -128, -128, -128, -127, -127, -127, -127, -127, -127, -127, -127, -127, -127, -127, -127, -127, -127, -127, -127, -127, -127, -127, -127, -127, -127, -126, -126, -126, -126, -126, -126, -126, -126, -126, -126, -125, -125, -125, -125, -125, -125, -125, -124, -124, -124, -124, -124, -123, -123, -123, -123, -122, -122, -122, -122, -121, -121, -120, -120, -120, -119, -119, -118, -118, -117, -117, -116, -116, -115, -115, -114, -113, -113, -112, -111, -110, -109, -109, -108, -107, -106, -105, -104, -102, -101, -100, -99, -97, -96, -95, -93, -92, -90, -88, -87, -85, -83, -81, -79, -77, -75, -73, -71, -69, -66, -64, -62, -59, -57, -54, -51, -49, -46, -43, -40, -37, -34, -31, -28, -25, -22, -19, -16, -13, -10, -6, -3, 0, 3, 6, 10, 13, 16, 19, 22, 25, 28, 31, 34, 37, 40, 43, 46, 49, 51, 54, 57, 59, 62, 64, 66, 69, 71, 73, 75, 77, 79, 81, 83, 85, 87, 88, 90, 92, 93, 95, 96, 97, 99, 100, 101, 102, 104, 105, 106, 107, 108, 109, 109, 110, 111, 112, 113, 113, 114, 115, 115, 116, 116, 117, 117, 118, 118, 119, 119, 120, 120, 120, 121, 121, 122, 122, 122, 122, 123, 123, 123, 123, 124, 124, 124, 124, 124, 125, 125, 125, 125, 125, 125, 125, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127>} : tensor<?x4xi8> -> tensor<?x4xi8>
  %s = dghw.softmax %y {exp_table = array<i32: 65536, 62340, 59299, 56407, 53656, 51039, 48550, 46182, 43930, 41788, 39750, 37811, 35967, 34213, 32544, 30957, 29447, 28011, 26645, 25345, 24109, 22934, 21815, 20751, 19739, 18776, 17861, 16990, 16161, 15373, 14623, 13910, 13231, 12586, 11972, 11388, 10833, 10305, 9802, 9324, 8869, 8437, 8025, 7634, 7262, 6907, 6571, 6250, 5945, 5655, 5380, 5117, 4868, 4630, 4404, 4190, 3985, 3791, 3606, 3430, 3263, 3104, 2952, 2808, 2671, 2541, 2417, 2299, 2187, 2080, 1979, 1882, 1791, 1703, 1620, 1541, 1466, 1395, 1327, 1262, 1200, 1142, 1086, 1033, 983, 935, 889, 846, 805, 765, 728, 693, 659, 627, 596, 567, 539, 513, 488, 464, 442, 420, 400, 380, 362, 344, 327, 311, 296, 282, 268, 255, 242, 231, 219, 209, 198, 189, 180, 171, 162, 155, 147, 140, 133, 127, 120, 114, 109, 104, 99, 94, 89, 85, 81, 77, 73, 69, 66, 63, 60, 57, 54, 51, 49, 47, 44, 42, 40, 38, 36, 34, 33, 31, 30, 28, 27, 26, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 15, 14, 13, 13, 12, 11, 11, 10, 10, 9, 9, 9, 8, 8, 7, 7, 7, 6, 6, 6, 5, 5, 5, 5, 4, 4, 4, 4, 4, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, axis = 2 : i64} : tensor<?x3x4xi8> -> tensor<?x3x4xi8>
  func.return
}
// CHECK-NEXT:    %t = dghw.table %v {table = array<i8: -128, {{(-?[0-9]+, ){254}127}}>} : tensor<?x4xi8> -> tensor<?x4xi8>
// CHECK-NEXT:    %s = dghw.softmax %y {exp_table = array<i32: 65536, {{([0-9]+, ){254}[0-9]+}}>, axis = 2 : i64} : tensor<?x3x4xi8> -> tensor<?x3x4xi8>
// GENERIC: %t = "dghw.table"(%v) <{table = array<i8: -128, {{(-?[0-9]+, ){254}127}}>}> : (tensor<?x4xi8>) -> tensor<?x4xi8>

// CHECK-LABEL: func.func @concat
func.func @concat(%a: tensor<?x5x5x2xi8>, %b: tensor<?x5x5x3xi8>) {
  %k = dghw.concat %a, %b, %a {axis = 3 : i64} : (tensor<?x5x5x2xi8>, tensor<?x5x5x3xi8>, tensor<?x5x5x2xi8>) -> tensor<?x5x5x7xi8>
  %h = dghw.concat %a, %a {axis = 1 : i64} : (tensor<?x5x5x2xi8>, tensor<?x5x5x2xi8>) -> tensor<?x10x5x2xi8>
  func.return
}
// CHECK-NEXT:    %k = dghw.concat %a, %b, %a {axis = 3 : i64} : (tensor<?x5x5x2xi8>, tensor<?x5x5x3xi8>, tensor<?x5x5x2xi8>) -> tensor<?x5x5x7xi8>
// CHECK-NEXT:    %h = dghw.concat %a, %a {axis = 1 : i64} : (tensor<?x5x5x2xi8>, tensor<?x5x5x2xi8>) -> tensor<?x10x5x2xi8>
// GENERIC: %k = "dghw.concat"(%a, %b, %a) <{axis = 3 : i64}> : (tensor<?x5x5x2xi8>, tensor<?x5x5x3xi8>, tensor<?x5x5x2xi8>) -> tensor<?x5x5x7xi8>

// CHECK-LABEL: func.func @resize
func.func @resize(%x: tensor<?x5x3x2xi8>) {
  %r = dghw.resize_nearest %x {mode = "nearest"} : tensor<?x5x3x2xi8> -> tensor<?x10x6x2xi8>
  %e = dghw.resize_nearest %x {mode = "nearest-exact"} : tensor<?x5x3x2xi8> -> tensor<?x3x7x2xi8>
  func.return
}
// CHECK-NEXT:    %r = dghw.resize_nearest %x {mode = "nearest"} : tensor<?x5x3x2xi8> -> tensor<?x10x6x2xi8>
// CHECK-NEXT:    %e = dghw.resize_nearest %x {mode = "nearest-exact"} : tensor<?x5x3x2xi8> -> tensor<?x3x7x2xi8>
// GENERIC: %r = "dghw.resize_nearest"(%x) <{mode = "nearest"}> : (tensor<?x5x3x2xi8>) -> tensor<?x10x6x2xi8>

// CHECK-LABEL: func.func @slice
func.func @slice(%x: tensor<?x5x8xi8>) {
  %s = dghw.slice %x {axis = 2 : i64, start = 2 : i64, end = 6 : i64} : tensor<?x5x8xi8> -> tensor<?x5x4xi8>
  func.return
}
// CHECK-NEXT:    %s = dghw.slice %x {axis = 2 : i64, start = 2 : i64, end = 6 : i64} : tensor<?x5x8xi8> -> tensor<?x5x4xi8>
// GENERIC: %s = "dghw.slice"(%x) <{axis = 2 : i64, start = 2 : i64, end = 6 : i64}> : (tensor<?x5x8xi8>) -> tensor<?x5x4xi8>

// Integer logic layers: i32 in, i32 out, model layout.
// CHECK-LABEL: func.func @logic
func.func @logic(%x: tensor<?x3x4xi32>) {
  %l = dghw.shift %x {direction = "left", shift = 31 : i64} : tensor<?x3x4xi32> -> tensor<?x3x4xi32>
  %r = dghw.shift %x {direction = "right", shift = 0 : i64} : tensor<?x3x4xi32> -> tensor<?x3x4xi32>
  %a = dghw.bitwise %x {kind = "and", value = -2147483648 : i64} : tensor<?x3x4xi32> -> tensor<?x3x4xi32>
  %o = dghw.bitwise %x {kind = "or", value = 5 : i64} : tensor<?x3x4xi32> -> tensor<?x3x4xi32>
  %e = dghw.bitwise %x {kind = "xor", value = 2147483647 : i64} : tensor<?x3x4xi32> -> tensor<?x3x4xi32>
  %t = dghw.tile %x {multiples = array<i64: 1, 2, 3>} : tensor<?x3x4xi32> -> tensor<?x6x12xi32>
  %c = dghw.compare %x {kind = "ge", value = -7 : i64} : tensor<?x3x4xi32> -> tensor<?x3x4xi32>
  func.return
}
// CHECK-NEXT:    %l = dghw.shift %x {direction = "left", shift = 31 : i64} : tensor<?x3x4xi32> -> tensor<?x3x4xi32>
// CHECK-NEXT:    %r = dghw.shift %x {direction = "right", shift = 0 : i64} : tensor<?x3x4xi32> -> tensor<?x3x4xi32>
// CHECK-NEXT:    %a = dghw.bitwise %x {kind = "and", value = -2147483648 : i64} : tensor<?x3x4xi32> -> tensor<?x3x4xi32>
// CHECK-NEXT:    %o = dghw.bitwise %x {kind = "or", value = 5 : i64} : tensor<?x3x4xi32> -> tensor<?x3x4xi32>
// CHECK-NEXT:    %e = dghw.bitwise %x {kind = "xor", value = 2147483647 : i64} : tensor<?x3x4xi32> -> tensor<?x3x4xi32>
// CHECK-NEXT:    %t = dghw.tile %x {multiples = array<i64: 1, 2, 3>} : tensor<?x3x4xi32> -> tensor<?x6x12xi32>
// CHECK-NEXT:    %c = dghw.compare %x {kind = "ge", value = -7 : i64} : tensor<?x3x4xi32> -> tensor<?x3x4xi32>
// GENERIC: %l = "dghw.shift"(%x) <{direction = "left", shift = 31 : i64}> : (tensor<?x3x4xi32>) -> tensor<?x3x4xi32>
// GENERIC: %a = "dghw.bitwise"(%x) <{kind = "and", value = -2147483648 : i64}> : (tensor<?x3x4xi32>) -> tensor<?x3x4xi32>
// GENERIC: %t = "dghw.tile"(%x) <{multiples = array<i64: 1, 2, 3>}> : (tensor<?x3x4xi32>) -> tensor<?x6x12xi32>
// GENERIC: %c = "dghw.compare"(%x) <{kind = "ge", value = -7 : i64}> : (tensor<?x3x4xi32>) -> tensor<?x3x4xi32>

// int8 logic tensors: shifts by 0..7 wrap at 8 bits; a comparison still yields i32 0/1.
// CHECK-LABEL: func.func @logic_i8
func.func @logic_i8(%x: tensor<?x3xi8>) {
  %l = dghw.shift %x {direction = "left", shift = 7 : i64} : tensor<?x3xi8> -> tensor<?x3xi8>
  %a = dghw.bitwise %x {kind = "and", value = -128 : i64} : tensor<?x3xi8> -> tensor<?x3xi8>
  %t = dghw.tile %x {multiples = array<i64: 1, 2>} : tensor<?x3xi8> -> tensor<?x6xi8>
  %c = dghw.compare %x {kind = "lt", value = 127 : i64} : tensor<?x3xi8> -> tensor<?x3xi32>
  func.return
}
// CHECK-NEXT:    %l = dghw.shift %x {direction = "left", shift = 7 : i64} : tensor<?x3xi8> -> tensor<?x3xi8>
// CHECK-NEXT:    %a = dghw.bitwise %x {kind = "and", value = -128 : i64} : tensor<?x3xi8> -> tensor<?x3xi8>
// CHECK-NEXT:    %t = dghw.tile %x {multiples = array<i64: 1, 2>} : tensor<?x3xi8> -> tensor<?x6xi8>
// CHECK-NEXT:    %c = dghw.compare %x {kind = "lt", value = 127 : i64} : tensor<?x3xi8> -> tensor<?x3xi32>

// Logic ops on two tensors of one element type and shape: i32 or i8 operands, a
// comparison yields i32 0/1.
// CHECK-LABEL: func.func @logic_tensors
func.func @logic_tensors(%x: tensor<?x3x4xi32>, %y: tensor<?x3x4xi32>, %p: tensor<?x3xi8>, %q: tensor<?x3xi8>) {
  %a = dghw.bitwise_tensor %x, %y {kind = "and"} : (tensor<?x3x4xi32>, tensor<?x3x4xi32>) -> tensor<?x3x4xi32>
  %o = dghw.bitwise_tensor %x, %y {kind = "or"} : (tensor<?x3x4xi32>, tensor<?x3x4xi32>) -> tensor<?x3x4xi32>
  %e = dghw.bitwise_tensor %p, %q {kind = "xor"} : (tensor<?x3xi8>, tensor<?x3xi8>) -> tensor<?x3xi8>
  %c = dghw.compare_tensor %x, %y {kind = "ne"} : (tensor<?x3x4xi32>, tensor<?x3x4xi32>) -> tensor<?x3x4xi32>
  %d = dghw.compare_tensor %p, %q {kind = "lt"} : (tensor<?x3xi8>, tensor<?x3xi8>) -> tensor<?x3xi32>
  func.return
}
// CHECK-NEXT:    %a = dghw.bitwise_tensor %x, %y {kind = "and"} : (tensor<?x3x4xi32>, tensor<?x3x4xi32>) -> tensor<?x3x4xi32>
// CHECK-NEXT:    %o = dghw.bitwise_tensor %x, %y {kind = "or"} : (tensor<?x3x4xi32>, tensor<?x3x4xi32>) -> tensor<?x3x4xi32>
// CHECK-NEXT:    %e = dghw.bitwise_tensor %p, %q {kind = "xor"} : (tensor<?x3xi8>, tensor<?x3xi8>) -> tensor<?x3xi8>
// CHECK-NEXT:    %c = dghw.compare_tensor %x, %y {kind = "ne"} : (tensor<?x3x4xi32>, tensor<?x3x4xi32>) -> tensor<?x3x4xi32>
// CHECK-NEXT:    %d = dghw.compare_tensor %p, %q {kind = "lt"} : (tensor<?x3xi8>, tensor<?x3xi8>) -> tensor<?x3xi32>
// GENERIC: %a = "dghw.bitwise_tensor"(%x, %y) <{kind = "and"}> : (tensor<?x3x4xi32>, tensor<?x3x4xi32>) -> tensor<?x3x4xi32>
// GENERIC: %d = "dghw.compare_tensor"(%p, %q) <{kind = "lt"}> : (tensor<?x3xi8>, tensor<?x3xi8>) -> tensor<?x3xi32>

// CHECK-LABEL: func.func @mul
func.func @mul(%x: tensor<?x5x8xi8>, %c: tensor<1x5x1xi8>) {
  %m = dghw.mul %x, %c {input_zp = -3 : i32, constant_zp = 0 : i32} : (tensor<?x5x8xi8>, tensor<1x5x1xi8>) -> tensor<?x5x8xi32>
  func.return
}
// CHECK-NEXT:    %m = dghw.mul %x, %c {input_zp = -3 : i32, constant_zp = 0 : i32} : (tensor<?x5x8xi8>, tensor<1x5x1xi8>) -> tensor<?x5x8xi32>
// GENERIC: %m = "dghw.mul"(%x, %c) <{input_zp = -3 : i32, constant_zp = 0 : i32}> : (tensor<?x5x8xi8>, tensor<1x5x1xi8>) -> tensor<?x5x8xi32>

// CHECK-LABEL: func.func @matmul
func.func @matmul(%q: tensor<?x2x5x4xi8>, %k: tensor<?x2x4x5xi8>) {
  %s = dghw.matmul %q, %k {lhs_zp = -3 : i32, rhs_zp = 2 : i32} : (tensor<?x2x5x4xi8>, tensor<?x2x4x5xi8>) -> tensor<?x2x5x5xi32>
  func.return
}
// CHECK-NEXT:    %s = dghw.matmul %q, %k {lhs_zp = -3 : i32, rhs_zp = 2 : i32} : (tensor<?x2x5x4xi8>, tensor<?x2x4x5xi8>) -> tensor<?x2x5x5xi32>
// GENERIC: %s = "dghw.matmul"(%q, %k) <{lhs_zp = -3 : i32, rhs_zp = 2 : i32}> : (tensor<?x2x5x4xi8>, tensor<?x2x4x5xi8>) -> tensor<?x2x5x5xi32>

// CHECK-LABEL: func.func @norm
func.func @norm(%x: tensor<?x5x4xi8>) {
  %l = dghw.norm %x {kind = "layer", input_zp = -3 : i32, output_zp = 2 : i32, eps = 167772 : i64, multiplier = array<i32: 1073741824, -536870912, 2147483647, -2147483648>, bias = array<i64: 0, 2305843009213693952, -2305843009213693952, 7>, shift = 51 : i32} : tensor<?x5x4xi8> -> tensor<?x5x4xi8>
  func.return
}
// CHECK-NEXT:    %l = dghw.norm %x {kind = "layer", input_zp = -3 : i32, output_zp = 2 : i32, eps = 167772 : i64, multiplier = array<i32: 1073741824, -536870912, 2147483647, -2147483648>, bias = array<i64: 0, 2305843009213693952, -2305843009213693952, 7>, shift = 51 : i32} : tensor<?x5x4xi8> -> tensor<?x5x4xi8>
// GENERIC: %l = "dghw.norm"(%x) <{kind = "layer", input_zp = -3 : i32, output_zp = 2 : i32, eps = 167772 : i64, multiplier = array<i32: 1073741824, -536870912, 2147483647, -2147483648>, bias = array<i64: 0, 2305843009213693952, -2305843009213693952, 7>, shift = 51 : i32}> : (tensor<?x5x4xi8>) -> tensor<?x5x4xi8>
