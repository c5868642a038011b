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
