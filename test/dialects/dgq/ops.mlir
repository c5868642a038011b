// Round trip of every dgq op and of the !dgq.uniform type, in custom and in generic form.
// RUN: dg-opt %s | dg-opt | filecheck %s
// RUN: dg-opt %s --print-op-generic | dg-opt | filecheck %s
// RUN: dg-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// The type prints its zero point only when non-zero, its storage range only when
// narrower than the storage type, and the axis only for per-axis types.
// CHECK-LABEL: func.func @types
// CHECK-SAME: (%a: tensor<4x!dgq.uniform<i8:f32, 0.5>>,
// CHECK-SAME: %b: tensor<4x!dgq.uniform<i8:f32, 0.0195:-12>>,
// CHECK-SAME: %c: tensor<2x3x!dgq.uniform<i8<-127:127>:f32:0, {0.25,0.125:3}>>,
// CHECK-SAME: %d: tensor<3x2x!dgq.uniform<i32:f32:1, {1.0e-05,2.0e-05}>>,
// CHECK-SAME: %e: tensor<4x!dgq.uniform<i16<-100:100>:f16, 3.0:-100>>,
// CHECK-SAME: %f: tensor<?x4x!dgq.uniform<i8:f64, 1.5e+20:127>>)
func.func @types(%a: tensor<4x!dgq.uniform<i8:f32, 0.5:0>>,
                 %b: tensor<4x!dgq.uniform<i8<-128:127>:f32, 0.0195:-12>>,
                 %c: tensor<2x3x!dgq.uniform<i8<-127:127>:f32:0, {0.25:0,0.125:3}>>,
                 %d: tensor<3x2x!dgq.uniform<i32:f32:1, {1.0e-5, 2.0e-5}>>,
                 %e: tensor<4x!dgq.uniform<i16<-100:100>:f16, 3.0:-100>>,
                 %f: tensor<?x4x!dgq.uniform<i8:f64, 1.5e20:127>>) {
  func.return
}
// GENERIC: (%a: tensor<4x!dgq.uniform<i8:f32, 0.5>>, %b: tensor<4x!dgq.uniform<i8:f32, 0.0195:-12>>

// CHECK-LABEL: func.func @boundary
func.func @boundary(%x: tensor<?x1x4x4xf32>) -> tensor<?x1x4x4xf32> {
  %xq = dgq.quantize %x : tensor<?x1x4x4xf32> -> tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.5:-3>>
  %rq = dgq.requantize %xq : tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.25:7>>
  %xd = dgq.dequantize %rq : tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.25:7>> -> tensor<?x1x4x4xf32>
  func.return %xd : tensor<?x1x4x4xf32>
}
// CHECK-NEXT:    %xq = dgq.quantize %x : tensor<?x1x4x4xf32> -> tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.5:-3>>
// CHECK-NEXT:    %rq = dgq.requantize %xq : tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.25:7>>
// CHECK-NEXT:    %xd = dgq.dequantize %rq : tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.25:7>> -> tensor<?x1x4x4xf32>
// GENERIC: %xq = "dgq.quantize"(%x) : (tensor<?x1x4x4xf32>) -> tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.5:-3>>

// CHECK-LABEL: func.func @constant
func.func @constant() -> (tensor<2x1x1x2x!dgq.uniform<i8<-127:127>:f32:0, {0.25,0.125}>>, tensor<2x!dgq.uniform<i32:f32:0, {0.125,0.0625}>>) {
  %w = dgq.constant {value = dense<[[[[1, -127]]], [[[127, 0]]]]> : tensor<2x1x1x2xi8>} : tensor<2x1x1x2x!dgq.uniform<i8<-127:127>:f32:0, {0.25,0.125}>>
  %b = dgq.constant {value = dense<[100, -100]> : tensor<2xi32>} : tensor<2x!dgq.uniform<i32:f32:0, {0.125,0.0625}>>
  func.return %w, %b : tensor<2x1x1x2x!dgq.uniform<i8<-127:127>:f32:0, {0.25,0.125}>>, tensor<2x!dgq.uniform<i32:f32:0, {0.125,0.0625}>>
}
// CHECK-NEXT:    %w = dgq.constant {value = dense<{{\[\[\[\[}}1, -127]]], {{\[\[\[}}127, 0]]]]> : tensor<2x1x1x2xi8>} : tensor<2x1x1x2x!dgq.uniform<i8<-127:127>:f32:0, {0.25,0.125}>>
// CHECK-NEXT:    %b = dgq.constant {value = dense<[100, -100]> : tensor<2xi32>} : tensor<2x!dgq.uniform<i32:f32:0, {0.125,0.0625}>>
// GENERIC: %b = "dgq.constant"() <{value = dense<[100, -100]> : tensor<2xi32>}> : () -> tensor<2x!dgq.uniform<i32:f32:0, {0.125,0.0625}>>

// The bias grid is input scale * weight scale per output channel.
// CHECK-LABEL: func.func @conv2d
func.func @conv2d(%x: tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.5:-3>>,
                  %w: tensor<2x1x3x3x!dgq.uniform<i8<-127:127>:f32:0, {0.25,0.125}>>,
                  %b: tensor<2x!dgq.uniform<i32:f32:0, {0.125,0.0625}>>,
                  %wt: tensor<2x1x3x3x!dgq.uniform<i8<-127:127>:f32, 0.25>>) {
  %c = dgq.conv2d %x, %w, %b {stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, fused_activation = "relu"} : (tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.5:-3>>, tensor<2x1x3x3x!dgq.uniform<i8<-127:127>:f32:0, {0.25,0.125}>>, tensor<2x!dgq.uniform<i32:f32:0, {0.125,0.0625}>>) -> tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.25:1>>
  %s = dgq.conv2d %x, %w {stride = array<i64: 2, 1>, pad = array<i64: 1, 0, 1, 2>, groups = 1 : i64} : (tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.5:-3>>, tensor<2x1x3x3x!dgq.uniform<i8<-127:127>:f32:0, {0.25,0.125}>>) -> tensor<?x2x2x5x!dgq.uniform<i8:f32, 0.25:1>>
  %t = dgq.conv2d %x, %wt {stride = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, fused_activation = "none"} : (tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.5:-3>>, tensor<2x1x3x3x!dgq.uniform<i8<-127:127>:f32, 0.25>>) -> tensor<?x2x4x4x!dgq.uniform<i8:f32, 0.25:1>>
  func.return
}
// CHECK:         %c = dgq.conv2d %x, %w, %b {stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, fused_activation = "relu"} : (tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.5:-3>>, tensor<2x1x3x3x!dgq.uniform<i8<-127:127>:f32:0, {0.25,0.125}>>, tensor<2x!dgq.uniform<i32:f32:0, {0.125,0.0625}>>) -> tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.25:1>>
// CHECK-NEXT:    %s = dgq.conv2d %x, %w {stride = array<i64: 2, 1>, pad = array<i64: 1, 0, 1, 2>, groups = 1 : i64} : (tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.5:-3>>, tensor<2x1x3x3x!dgq.uniform<i8<-127:127>:f32:0, {0.25,0.125}>>) -> tensor<?x2x2x5x!dgq.uniform<i8:f32, 0.25:1>>
// The default activation is elided in the custom form and explicit in the generic one.
// CHECK-NEXT:    %t = dgq.conv2d %x, %wt {stride = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>} : (tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.5:-3>>, tensor<2x1x3x3x!dgq.uniform<i8<-127:127>:f32, 0.25>>) -> tensor<?x2x4x4x!dgq.uniform<i8:f32, 0.25:1>>
// GENERIC: %s = "dgq.conv2d"(%x, %w) <{stride = array<i64: 2, 1>, pad = array<i64: 1, 0, 1, 2>, groups = 1 : i64, fused_activation = "none"}>

// CHECK-LABEL: func.func @linear
func.func @linear(%x: tensor<?x8x!dgq.uniform<i8:f32, 0.5>>,
                  %w: tensor<3x8x!dgq.uniform<i8<-127:127>:f32, 0.01>>,
                  %b: tensor<3x!dgq.uniform<i32:f32, 0.005>>) {
  %y = dgq.linear %x, %w, %b : (tensor<?x8x!dgq.uniform<i8:f32, 0.5>>, tensor<3x8x!dgq.uniform<i8<-127:127>:f32, 0.01>>, tensor<3x!dgq.uniform<i32:f32, 0.005>>) -> tensor<?x3x!dgq.uniform<i8:f32, 0.001:5>>
  %r = dgq.linear %x, %w {fused_activation = "relu"} : (tensor<?x8x!dgq.uniform<i8:f32, 0.5>>, tensor<3x8x!dgq.uniform<i8<-127:127>:f32, 0.01>>) -> tensor<?x3x!dgq.uniform<i8:f32, 0.001:5>>
  func.return
}
// CHECK-NEXT:    %y = dgq.linear %x, %w, %b : (tensor<?x8x!dgq.uniform<i8:f32, 0.5>>, tensor<3x8x!dgq.uniform<i8<-127:127>:f32, 0.01>>, tensor<3x!dgq.uniform<i32:f32, 0.005>>) -> tensor<?x3x!dgq.uniform<i8:f32, 0.001:5>>
// CHECK-NEXT:    %r = dgq.linear %x, %w {fused_activation = "relu"} : (tensor<?x8x!dgq.uniform<i8:f32, 0.5>>, tensor<3x8x!dgq.uniform<i8<-127:127>:f32, 0.01>>) -> tensor<?x3x!dgq.uniform<i8:f32, 0.001:5>>

// Each operand of an add keeps its own grid.
// CHECK-LABEL: func.func @add
func.func @add(%a: tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.25:1>>, %b: tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.125:-4>>) {
  %s = dgq.add %a, %b : (tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.25:1>>, tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.125:-4>>) -> tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.5:-128>>
  %r = dgq.add %a, %b {fused_activation = "relu"} : (tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.25:1>>, tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.125:-4>>) -> tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.5:-128>>
  func.return
}
// CHECK-NEXT:    %s = dgq.add %a, %b : (tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.25:1>>, tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.125:-4>>) -> tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.5:-128>>
// CHECK-NEXT:    %r = dgq.add %a, %b {fused_activation = "relu"} : (tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.25:1>>, tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.125:-4>>) -> tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.5:-128>>
// GENERIC: %r = "dgq.add"(%a, %b) <{fused_activation = "relu"}>

// CHECK-LABEL: func.func @reshape
func.func @reshape(%x: tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.5:3>>) -> tensor<?x8x!dgq.uniform<i8:f32, 0.5:3>> {
  %f = dgq.reshape %x : tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x8x!dgq.uniform<i8:f32, 0.5:3>>
  func.return %f : tensor<?x8x!dgq.uniform<i8:f32, 0.5:3>>
}
// CHECK-NEXT:    %f = dgq.reshape %x : tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x8x!dgq.uniform<i8:f32, 0.5:3>>

// Depthwise: groups = in channels = out channels, weight [C, 1, kh, kw].
// CHECK-LABEL: func.func @depthwise
func.func @depthwise(%x: tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>, %w: tensor<2x1x3x3x!dgq.uniform<i8<-127:127>:f32:0, {0.25,0.125}>>, %b: tensor<2x!dgq.uniform<i32:f32:0, {0.125,0.0625}>>) {
  %d = dgq.conv2d %x, %w, %b {stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>, groups = 2 : i64, fused_activation = "relu"} : (tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>, tensor<2x1x3x3x!dgq.uniform<i8<-127:127>:f32:0, {0.25,0.125}>>, tensor<2x!dgq.uniform<i32:f32:0, {0.125,0.0625}>>) -> tensor<?x2x3x3x!dgq.uniform<i8:f32, 0.25:1>>
  func.return
}
// CHECK-NEXT:    %d = dgq.conv2d %x, %w, %b {stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>, groups = 2 : i64, fused_activation = "relu"} : (tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>, tensor<2x1x3x3x!dgq.uniform<i8<-127:127>:f32:0, {0.25,0.125}>>, tensor<2x!dgq.uniform<i32:f32:0, {0.125,0.0625}>>) -> tensor<?x2x3x3x!dgq.uniform<i8:f32, 0.25:1>>
// GENERIC: %d = "dgq.conv2d"(%x, %w, %b) <{stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>, groups = 2 : i64, fused_activation = "relu"}> : (tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>, tensor<2x1x3x3x!dgq.uniform<i8<-127:127>:f32:0, {0.25,0.125}>>, tensor<2x!dgq.uniform<i32:f32:0, {0.125,0.0625}>>) -> tensor<?x2x3x3x!dgq.uniform<i8:f32, 0.25:1>>

// Pools keep the grid. The window count may be the floor or the ceil one.
// CHECK-LABEL: func.func @pool
func.func @pool(%x: tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %m = dgq.max_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>} : tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.5:-3>>
  %mc = dgq.max_pool2d %x {kernel = array<i64: 3, 2>, stride = array<i64: 1, 2>, pad = array<i64: 0, 0, 0, 0>} : tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x2x3x3x!dgq.uniform<i8:f32, 0.5:-3>>
  %a = dgq.avg_pool2d %x {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>, count_include_pad = false} : tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x2x3x3x!dgq.uniform<i8:f32, 0.5:-3>>
  %ac = dgq.avg_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 1, 0>, count_include_pad = true, divisor_override = 3 : i64} : tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x2x3x3x!dgq.uniform<i8:f32, 0.5:-3>>
  func.return
}
// CHECK-NEXT:    %m = dgq.max_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>} : tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.5:-3>>
// CHECK-NEXT:    %mc = dgq.max_pool2d %x {kernel = array<i64: 3, 2>, stride = array<i64: 1, 2>, pad = array<i64: 0, 0, 0, 0>} : tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x2x3x3x!dgq.uniform<i8:f32, 0.5:-3>>
// CHECK-NEXT:    %a = dgq.avg_pool2d %x {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>, count_include_pad = false} : tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x2x3x3x!dgq.uniform<i8:f32, 0.5:-3>>
// CHECK-NEXT:    %ac = dgq.avg_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 1, 0>, count_include_pad = true, divisor_override = 3 : i64} : tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x2x3x3x!dgq.uniform<i8:f32, 0.5:-3>>
// GENERIC: %m = "dgq.max_pool2d"(%x) <{kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>}> : (tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>) -> tensor<?x2x2x2x!dgq.uniform<i8:f32, 0.5:-3>>

// The result grid is fixed: 1/256, -128, whatever the input grid.
// CHECK-LABEL: func.func @fixed_grid
func.func @fixed_grid(%x: tensor<?x10x!dgq.uniform<i8:f32, 0.5:-3>>, %y: tensor<?x3x4x!dgq.uniform<i8:f32, 0.125>>) {
  %s = dgq.softmax %x {axis = 1 : i64} : tensor<?x10x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x10x!dgq.uniform<i8:f32, 0.00390625:-128>>
  %t = dgq.softmax %y {axis = 2 : i64} : tensor<?x3x4x!dgq.uniform<i8:f32, 0.125>> -> tensor<?x3x4x!dgq.uniform<i8:f32, 0.00390625:-128>>
  %g = dgq.sigmoid %y : tensor<?x3x4x!dgq.uniform<i8:f32, 0.125>> -> tensor<?x3x4x!dgq.uniform<i8:f32, 0.00390625:-128>>
  func.return
}
// CHECK-NEXT:    %s = dgq.softmax %x {axis = 1 : i64} : tensor<?x10x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x10x!dgq.uniform<i8:f32, 0.00390625:-128>>
// CHECK-NEXT:    %t = dgq.softmax %y {axis = 2 : i64} : tensor<?x3x4x!dgq.uniform<i8:f32, 0.125>> -> tensor<?x3x4x!dgq.uniform<i8:f32, 0.00390625:-128>>
// CHECK-NEXT:    %g = dgq.sigmoid %y : tensor<?x3x4x!dgq.uniform<i8:f32, 0.125>> -> tensor<?x3x4x!dgq.uniform<i8:f32, 0.00390625:-128>>
// GENERIC: %s = "dgq.softmax"(%x) <{axis = 1 : i64}> : (tensor<?x10x!dgq.uniform<i8:f32, 0.5:-3>>) -> tensor<?x10x!dgq.uniform<i8:f32, 0.00390625:-128>>

// CHECK-LABEL: func.func @concat
func.func @concat(%a: tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>, %b: tensor<?x3x5x5x!dgq.uniform<i8:f32, 0.5:-3>>, %v: tensor<?x4x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %k = dgq.concat %a, %b, %a {axis = 1 : i64} : (tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>, tensor<?x3x5x5x!dgq.uniform<i8:f32, 0.5:-3>>, tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>) -> tensor<?x7x5x5x!dgq.uniform<i8:f32, 0.5:-3>>
  %w = dgq.concat %a, %a {axis = 3 : i64} : (tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>, tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>) -> tensor<?x2x5x10x!dgq.uniform<i8:f32, 0.5:-3>>
  %f = dgq.concat %v {axis = 1 : i64} : (tensor<?x4x!dgq.uniform<i8:f32, 0.5:-3>>) -> tensor<?x4x!dgq.uniform<i8:f32, 0.5:-3>>
  func.return
}
// CHECK-NEXT:    %k = dgq.concat %a, %b, %a {axis = 1 : i64} : (tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>, tensor<?x3x5x5x!dgq.uniform<i8:f32, 0.5:-3>>, tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>) -> tensor<?x7x5x5x!dgq.uniform<i8:f32, 0.5:-3>>
// CHECK-NEXT:    %w = dgq.concat %a, %a {axis = 3 : i64} : (tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>, tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>) -> tensor<?x2x5x10x!dgq.uniform<i8:f32, 0.5:-3>>
// CHECK-NEXT:    %f = dgq.concat %v {axis = 1 : i64} : (tensor<?x4x!dgq.uniform<i8:f32, 0.5:-3>>) -> tensor<?x4x!dgq.uniform<i8:f32, 0.5:-3>>
// GENERIC: %k = "dgq.concat"(%a, %b, %a) <{axis = 1 : i64}> : (tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>, tensor<?x3x5x5x!dgq.uniform<i8:f32, 0.5:-3>>, tensor<?x2x5x5x!dgq.uniform<i8:f32, 0.5:-3>>) -> tensor<?x7x5x5x!dgq.uniform<i8:f32, 0.5:-3>>

// CHECK-LABEL: func.func @movement
func.func @movement(%x: tensor<?x2x5x3x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %r = dgq.resize_nearest %x {mode = "nearest"} : tensor<?x2x5x3x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x2x10x6x!dgq.uniform<i8:f32, 0.5:-3>>
  %e = dgq.resize_nearest %x {mode = "nearest-exact"} : tensor<?x2x5x3x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x2x3x7x!dgq.uniform<i8:f32, 0.5:-3>>
  %p = dgq.pad %x {pad = array<i64: 1, 0, 2, 1>} : tensor<?x2x5x3x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x2x6x6x!dgq.uniform<i8:f32, 0.5:-3>>
  %f = dgq.flatten_channels_last %x : tensor<?x2x5x3x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x30x!dgq.uniform<i8:f32, 0.5:-3>>
  func.return
}
// CHECK-NEXT:    %r = dgq.resize_nearest %x {mode = "nearest"} : tensor<?x2x5x3x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x2x10x6x!dgq.uniform<i8:f32, 0.5:-3>>
// CHECK-NEXT:    %e = dgq.resize_nearest %x {mode = "nearest-exact"} : tensor<?x2x5x3x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x2x3x7x!dgq.uniform<i8:f32, 0.5:-3>>
// CHECK-NEXT:    %p = dgq.pad %x {pad = array<i64: 1, 0, 2, 1>} : tensor<?x2x5x3x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x2x6x6x!dgq.uniform<i8:f32, 0.5:-3>>
// CHECK-NEXT:    %f = dgq.flatten_channels_last %x : tensor<?x2x5x3x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x30x!dgq.uniform<i8:f32, 0.5:-3>>
// GENERIC: %r = "dgq.resize_nearest"(%x) <{mode = "nearest"}> : (tensor<?x2x5x3x!dgq.uniform<i8:f32, 0.5:-3>>) -> tensor<?x2x10x6x!dgq.uniform<i8:f32, 0.5:-3>>

// A transpose at feature rank 2 and 3; slices of sequence tensors (graph inputs below rank 4,
// and a rank-4 [B, H, S, D] that comes from a linear, so sequence-domain too).
// CHECK-LABEL: func.func @transpose_slice
func.func @transpose_slice(%s: tensor<?x5x8x!dgq.uniform<i8:f32, 0.5:-3>>, %h: tensor<?x2x5x4x!dgq.uniform<i8:f32, 0.5:-3>>, %w: tensor<8x4x!dgq.uniform<i8<-127:127>:f32:0, {0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1}>>) {
  %t = dgq.transpose %s {perm = array<i64: 0, 2, 1>} : tensor<?x5x8x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x8x5x!dgq.uniform<i8:f32, 0.5:-3>>
  %u = dgq.transpose %h {perm = array<i64: 0, 1, 3, 2>} : tensor<?x2x5x4x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x2x4x5x!dgq.uniform<i8:f32, 0.5:-3>>
  %a = dgq.slice %s {axis = 1 : i64, start = 1 : i64, end = 4 : i64} : tensor<?x5x8x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x3x8x!dgq.uniform<i8:f32, 0.5:-3>>
  %l = dgq.linear %h, %w : (tensor<?x2x5x4x!dgq.uniform<i8:f32, 0.5:-3>>, tensor<8x4x!dgq.uniform<i8<-127:127>:f32:0, {0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1}>>) -> tensor<?x2x5x8x!dgq.uniform<i8:f32, 0.5:-3>>
  %b = dgq.slice %l {axis = 3 : i64, start = 0 : i64, end = 4 : i64} : tensor<?x2x5x8x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x2x5x4x!dgq.uniform<i8:f32, 0.5:-3>>
  func.return
}
// CHECK-NEXT:    %t = dgq.transpose %s {perm = array<i64: 0, 2, 1>} : tensor<?x5x8x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x8x5x!dgq.uniform<i8:f32, 0.5:-3>>
// CHECK-NEXT:    %u = dgq.transpose %h {perm = array<i64: 0, 1, 3, 2>} : tensor<?x2x5x4x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x2x4x5x!dgq.uniform<i8:f32, 0.5:-3>>
// CHECK-NEXT:    %a = dgq.slice %s {axis = 1 : i64, start = 1 : i64, end = 4 : i64} : tensor<?x5x8x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x3x8x!dgq.uniform<i8:f32, 0.5:-3>>
// CHECK-NEXT:    %l = dgq.linear
// CHECK-NEXT:    %b = dgq.slice %l {axis = 3 : i64, start = 0 : i64, end = 4 : i64} : tensor<?x2x5x8x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x2x5x4x!dgq.uniform<i8:f32, 0.5:-3>>
// GENERIC: %t = "dgq.transpose"(%s) <{perm = array<i64: 0, 2, 1>}> : (tensor<?x5x8x!dgq.uniform<i8:f32, 0.5:-3>>) -> tensor<?x8x5x!dgq.uniform<i8:f32, 0.5:-3>>
// GENERIC: %a = "dgq.slice"(%s) <{axis = 1 : i64, start = 1 : i64, end = 4 : i64}> : (tensor<?x5x8x!dgq.uniform<i8:f32, 0.5:-3>>) -> tensor<?x3x8x!dgq.uniform<i8:f32, 0.5:-3>>

// CHECK-LABEL: func.func @mul_constant
func.func @mul_constant(%x: tensor<?x5x8x!dgq.uniform<i8:f32, 0.5:-3>>, %c: tensor<5x8x!dgq.uniform<i8<-127:127>:f32, 0.0078>>) {
  %m = dgq.mul_constant %x, %c : (tensor<?x5x8x!dgq.uniform<i8:f32, 0.5:-3>>, tensor<5x8x!dgq.uniform<i8<-127:127>:f32, 0.0078>>) -> tensor<?x5x8x!dgq.uniform<i8:f32, 0.25:1>>
  func.return
}
// CHECK-NEXT:    %m = dgq.mul_constant %x, %c : (tensor<?x5x8x!dgq.uniform<i8:f32, 0.5:-3>>, tensor<5x8x!dgq.uniform<i8<-127:127>:f32, 0.0078>>) -> tensor<?x5x8x!dgq.uniform<i8:f32, 0.25:1>>
// GENERIC: %m = "dgq.mul_constant"(%x, %c) : (tensor<?x5x8x!dgq.uniform<i8:f32, 0.5:-3>>, tensor<5x8x!dgq.uniform<i8<-127:127>:f32, 0.0078>>) -> tensor<?x5x8x!dgq.uniform<i8:f32, 0.25:1>>

// CHECK-LABEL: func.func @matmul
func.func @matmul(%q: tensor<?x5x4x!dgq.uniform<i8:f32, 0.5:-3>>, %k: tensor<?x4x6x!dgq.uniform<i8:f32, 0.25:2>>) {
  %s = dgq.matmul %q, %k {factor = 5.000000e-01 : f64} : (tensor<?x5x4x!dgq.uniform<i8:f32, 0.5:-3>>, tensor<?x4x6x!dgq.uniform<i8:f32, 0.25:2>>) -> tensor<?x5x6x!dgq.uniform<i8:f32, 0.125:1>>
  %t = dgq.matmul %q, %k : (tensor<?x5x4x!dgq.uniform<i8:f32, 0.5:-3>>, tensor<?x4x6x!dgq.uniform<i8:f32, 0.25:2>>) -> tensor<?x5x6x!dgq.uniform<i8:f32, 0.125:1>>
  func.return
}
// CHECK-NEXT:    %s = dgq.matmul %q, %k {factor = 5.000000e-01 : f64} : (tensor<?x5x4x!dgq.uniform<i8:f32, 0.5:-3>>, tensor<?x4x6x!dgq.uniform<i8:f32, 0.25:2>>) -> tensor<?x5x6x!dgq.uniform<i8:f32, 0.125:1>>
// CHECK-NEXT:    %t = dgq.matmul %q, %k : (tensor<?x5x4x!dgq.uniform<i8:f32, 0.5:-3>>, tensor<?x4x6x!dgq.uniform<i8:f32, 0.25:2>>) -> tensor<?x5x6x!dgq.uniform<i8:f32, 0.125:1>>
// GENERIC: %s = "dgq.matmul"(%q, %k) <{factor = 5.000000e-01 : f64}>

// A layer norm over the last axis of a [B, S, D] sequence tensor, an rms norm of a [B, D] one.
// CHECK-LABEL: func.func @norm
func.func @norm(%x: tensor<?x5x4x!dgq.uniform<i8:f32, 0.5:-3>>, %v: tensor<?x4x!dgq.uniform<i8:f32, 0.5:-3>>) {
  %l = dgq.norm %x {kind = "layer", eps = 1.0e-05 : f64, gamma = array<f64: 1.0, 0.5, -2.0, 1.0>, beta = array<f64: 0.0, 0.25, 0.0, -1.0>} : tensor<?x5x4x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x5x4x!dgq.uniform<i8:f32, 0.03125:2>>
  %r = dgq.norm %v {kind = "rms", eps = 1.0e-06 : f64, gamma = array<f64: 1.0, 1.0, 1.0, 1.0>, beta = array<f64: 0.0, 0.0, 0.0, 0.0>} : tensor<?x4x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x4x!dgq.uniform<i8:f32, 0.03125:2>>
  func.return
}
// CHECK-NEXT:    %l = dgq.norm %x {kind = "layer", eps = 1.000000e-05 : f64, gamma = array<f64: 1.000000e+00, 5.000000e-01, -2.000000e+00, 1.000000e+00>, beta = array<f64: 0.000000e+00, 2.500000e-01, 0.000000e+00, -1.000000e+00>} : tensor<?x5x4x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x5x4x!dgq.uniform<i8:f32, 0.03125:2>>
// CHECK-NEXT:    %r = dgq.norm %v {kind = "rms", eps = 1.000000e-06 : f64, gamma = array<f64: 1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00>, beta = array<f64: 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00>} : tensor<?x4x!dgq.uniform<i8:f32, 0.5:-3>> -> tensor<?x4x!dgq.uniform<i8:f32, 0.03125:2>>
// GENERIC: %r = "dgq.norm"(%v) <{kind = "rms", eps = 1.000000e-06 : f64, gamma = array<f64: 1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00>, beta = array<f64: 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00>}> : (tensor<?x4x!dgq.uniform<i8:f32, 0.5:-3>>) -> tensor<?x4x!dgq.uniform<i8:f32, 0.03125:2>>
