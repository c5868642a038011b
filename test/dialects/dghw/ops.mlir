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
