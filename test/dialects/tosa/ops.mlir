// Round trip of every op dg adds to xDSL's tosa dialect (dialects/tosa.py), as
// convert-dghw-to-tosa prints them (MLIR's generic form, which tosa-opt parses).
// The input is that pass's output for test/lowering/convert-dghw-to-tosa.mlir.
// RUN: dg-opt %s | dg-opt | filecheck %s
// RUN: dg-opt %s | tosa-opt | filecheck %s --check-prefix=TOSA

// CHECK-DAG: = "tosa.const_shape"(
// CHECK-DAG: = "tosa.conv2d"(
// CHECK-DAG: = "tosa.depthwise_conv2d"(
// CHECK-DAG: = "tosa.matmul"(
// CHECK-DAG: = "tosa.reshape"(
// CHECK-DAG: = "tosa.transpose"(
// CHECK-DAG: = "tosa.slice"(
// CHECK-DAG: = "tosa.pad"(
// CHECK-DAG: = "tosa.tile"(
// CHECK-DAG: = "tosa.table"(
// CHECK-DAG: = "tosa.gather"(
// CHECK-DAG: = "tosa.resize"(
// CHECK-DAG: = "tosa.cast"(
// CHECK-DAG: = "tosa.greater"(
// CHECK-DAG: = "tosa.greater_equal"(
// CHECK-DAG: = "tosa.equal"(
// CHECK-DAG: = "tosa.maximum"(
// CHECK-DAG: = "tosa.minimum"(
// CHECK-DAG: = "tosa.bitwise_and"(
// CHECK-DAG: = "tosa.bitwise_or"(
// CHECK-DAG: = "tosa.bitwise_xor"(
// CHECK-DAG: = "tosa.logical_left_shift"(
// CHECK-DAG: = "tosa.arithmetic_right_shift"(
// CHECK-DAG: = "tosa.logical_not"(
// CHECK-DAG: = "tosa.select"(
// TOSA-DAG: tosa.conv2d
// TOSA-DAG: tosa.select
// TOSA-DAG: tosa.bitwise_or

builtin.module {
  func.func @conv2d(%x: tensor<2x5x5x3xi8> {dghw.scale = 2.000000e-02 : f64, dghw.zero_point = 3 : i32}) -> tensor<2x3x3x4xi32> {
    %w = "tosa.const"() <{values = dense<1> : tensor<4x3x3x3xi8>}> : () -> tensor<4x3x3x3xi8>
    %b = "tosa.const"() <{values = dense<7> : tensor<4xi32>}> : () -> tensor<4xi32>
    %0 = "tosa.const"() <{values = dense<3> : tensor<1xi8>}> : () -> tensor<1xi8>
    %1 = "tosa.const"() <{values = dense<-1> : tensor<1xi8>}> : () -> tensor<1xi8>
    %c = "tosa.conv2d"(%x, %w, %b, %0, %1) <{pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, acc_type = i32}> : (tensor<2x5x5x3xi8>, tensor<4x3x3x3xi8>, tensor<4xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<2x3x3x4xi32>
    func.return %c : tensor<2x3x3x4xi32>
  }
  func.func @depthwise_conv2d(%x: tensor<2x4x4x2xi8>) -> tensor<2x4x4x2xi32> {
    %w = "tosa.const"() <{values = dense<1> : tensor<3x3x2xi8>}> : () -> tensor<3x3x2xi8>
    %b = "tosa.const"() <{values = dense<0> : tensor<2xi32>}> : () -> tensor<2xi32>
    %0 = "tosa.const_shape"() <{values = dense<[3, 3, 2, 1]> : tensor<4xindex>}> : () -> !tosa.shape<4>
    %1 = "tosa.reshape"(%w, %0) : (tensor<3x3x2xi8>, !tosa.shape<4>) -> tensor<3x3x2x1xi8>
    %2 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %3 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %c = "tosa.depthwise_conv2d"(%x, %1, %b, %2, %3) <{pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, acc_type = i32}> : (tensor<2x4x4x2xi8>, tensor<3x3x2x1xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<2x4x4x2xi32>
    func.return %c : tensor<2x4x4x2xi32>
  }
  func.func @fully_connected(%x: tensor<2x6xi8>) -> tensor<2x3xi32> {
    %w = "tosa.const"() <{values = dense<2> : tensor<3x6xi8>}> : () -> tensor<3x6xi8>
    %b = "tosa.const"() <{values = dense<-3> : tensor<3xi32>}> : () -> tensor<3xi32>
    %0 = "tosa.const_shape"() <{values = dense<[2, 1, 1, 6]> : tensor<4xindex>}> : () -> !tosa.shape<4>
    %1 = "tosa.reshape"(%x, %0) : (tensor<2x6xi8>, !tosa.shape<4>) -> tensor<2x1x1x6xi8>
    %2 = "tosa.const_shape"() <{values = dense<[3, 1, 1, 6]> : tensor<4xindex>}> : () -> !tosa.shape<4>
    %3 = "tosa.reshape"(%w, %2) : (tensor<3x6xi8>, !tosa.shape<4>) -> tensor<3x1x1x6xi8>
    %4 = "tosa.const"() <{values = dense<-5> : tensor<1xi8>}> : () -> tensor<1xi8>
    %5 = "tosa.const"() <{values = dense<1> : tensor<1xi8>}> : () -> tensor<1xi8>
    %6 = "tosa.conv2d"(%1, %3, %b, %4, %5) <{pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, acc_type = i32}> : (tensor<2x1x1x6xi8>, tensor<3x1x1x6xi8>, tensor<3xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<2x1x1x3xi32>
    %7 = "tosa.const_shape"() <{values = dense<[2, 3]> : tensor<2xindex>}> : () -> !tosa.shape<2>
    %y = "tosa.reshape"(%6, %7) : (tensor<2x1x1x3xi32>, !tosa.shape<2>) -> tensor<2x3xi32>
    func.return %y : tensor<2x3xi32>
  }
  func.func @rescale(%x: tensor<2x2xi32>) -> tensor<2x2xi8> {
    %0 = "tosa.const"() <{values = dense<[1073741824, 1500000000]> : tensor<2xi32>}> : () -> tensor<2xi32>
    %1 = "tosa.const"() <{values = dense<[33, 40]> : tensor<2xi8>}> : () -> tensor<2xi8>
    %2 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
    %3 = "tosa.const"() <{values = dense<-5> : tensor<1xi8>}> : () -> tensor<1xi8>
    %4 = tosa.rescale %x, %0, %1, %2, %3 {scale32 = true, rounding_mode = SINGLE_ROUND, per_channel = true, input_unsigned = false, output_unsigned = false} : (tensor<2x2xi32>, tensor<2xi32>, tensor<2xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<2x2xi8>
    %r = tosa.clamp %4 {min_val = -5 : i8, max_val = 127 : i8} : (tensor<2x2xi8>) -> tensor<2x2xi8>
    func.return %r : tensor<2x2xi8>
  }
  func.func @add(%x: tensor<2x2xi32>, %y: tensor<2x2xi32>) -> tensor<2x2xi32> {
    %s = tosa.add %x, %y : (tensor<2x2xi32>, tensor<2x2xi32>) -> tensor<2x2xi32>
    func.return %s : tensor<2x2xi32>
  }
  func.func @mul(%x: tensor<2x2x3xi8>) -> tensor<2x2x3xi32> {
    %c = "tosa.const"() <{values = dense<[[[1, 2, 3]]]> : tensor<1x1x3xi8>}> : () -> tensor<1x1x3xi8>
    %0 = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
    %1 = "tosa.const"() <{values = dense<30> : tensor<1xi8>}> : () -> tensor<1xi8>
    %2 = "tosa.const"() <{values = dense<4> : tensor<1xi8>}> : () -> tensor<1xi8>
    %3 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
    %4 = tosa.rescale %x, %0, %1, %2, %3 {scale32 = true, rounding_mode = SINGLE_ROUND, per_channel = false, input_unsigned = false, output_unsigned = false} : (tensor<2x2x3xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<2x2x3xi32>
    %5 = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
    %6 = "tosa.const"() <{values = dense<30> : tensor<1xi8>}> : () -> tensor<1xi8>
    %7 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %8 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
    %9 = tosa.rescale %c, %5, %6, %7, %8 {scale32 = true, rounding_mode = SINGLE_ROUND, per_channel = false, input_unsigned = false, output_unsigned = false} : (tensor<1x1x3xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x1x3xi32>
    %10 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %p = tosa.mul %4, %9, %10 : (tensor<2x2x3xi32>, tensor<1x1x3xi32>, tensor<1xi8>) -> tensor<2x2x3xi32>
    func.return %p : tensor<2x2x3xi32>
  }
  func.func @matmul(%a: tensor<2x2x3x4xi8>, %b: tensor<2x2x4x5xi8>) -> tensor<2x2x3x5xi32> {
    %0 = "tosa.const_shape"() <{values = dense<[4, 3, 4]> : tensor<3xindex>}> : () -> !tosa.shape<3>
    %1 = "tosa.reshape"(%a, %0) : (tensor<2x2x3x4xi8>, !tosa.shape<3>) -> tensor<4x3x4xi8>
    %2 = "tosa.const_shape"() <{values = dense<[4, 4, 5]> : tensor<3xindex>}> : () -> !tosa.shape<3>
    %3 = "tosa.reshape"(%b, %2) : (tensor<2x2x4x5xi8>, !tosa.shape<3>) -> tensor<4x4x5xi8>
    %4 = "tosa.const"() <{values = dense<1> : tensor<1xi8>}> : () -> tensor<1xi8>
    %5 = "tosa.const"() <{values = dense<-2> : tensor<1xi8>}> : () -> tensor<1xi8>
    %6 = "tosa.matmul"(%1, %3, %4, %5) : (tensor<4x3x4xi8>, tensor<4x4x5xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<4x3x5xi32>
    %7 = "tosa.const_shape"() <{values = dense<[2, 2, 3, 5]> : tensor<4xindex>}> : () -> !tosa.shape<4>
    %m = "tosa.reshape"(%6, %7) : (tensor<4x3x5xi32>, !tosa.shape<4>) -> tensor<2x2x3x5xi32>
    func.return %m : tensor<2x2x3x5xi32>
  }
  func.func @reshape(%x: tensor<2x2x3xi8>) -> tensor<2x6xi8> {
    %0 = "tosa.const_shape"() <{values = dense<[2, 6]> : tensor<2xindex>}> : () -> !tosa.shape<2>
    %r = "tosa.reshape"(%x, %0) : (tensor<2x2x3xi8>, !tosa.shape<2>) -> tensor<2x6xi8>
    func.return %r : tensor<2x6xi8>
  }
  func.func @transpose(%x: tensor<2x2x3xi8>) -> tensor<2x3x2xi8> {
    %t = "tosa.transpose"(%x) <{perms = array<i32: 0, 2, 1>}> : (tensor<2x2x3xi8>) -> tensor<2x3x2xi8>
    func.return %t : tensor<2x3x2xi8>
  }
  func.func @slice(%x: tensor<2x8x3xi8>) -> tensor<2x4x3xi8> {
    %0 = "tosa.const_shape"() <{values = dense<[0, 2, 0]> : tensor<3xindex>}> : () -> !tosa.shape<3>
    %1 = "tosa.const_shape"() <{values = dense<[2, 4, 3]> : tensor<3xindex>}> : () -> !tosa.shape<3>
    %s = "tosa.slice"(%x, %0, %1) : (tensor<2x8x3xi8>, !tosa.shape<3>, !tosa.shape<3>) -> tensor<2x4x3xi8>
    func.return %s : tensor<2x4x3xi8>
  }
  func.func @max_pool2d(%x: tensor<2x5x5x2xi8>) -> tensor<2x2x3x2xi8> {
    %0 = "tosa.const_shape"() <{values = dense<0> : tensor<4xindex>}> : () -> !tosa.shape<4>
    %1 = "tosa.const_shape"() <{values = dense<[2, 4, 5, 2]> : tensor<4xindex>}> : () -> !tosa.shape<4>
    %2 = "tosa.slice"(%x, %0, %1) : (tensor<2x5x5x2xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<2x4x5x2xi8>
    %p = tosa.max_pool2d %2 {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 1>} : (tensor<2x4x5x2xi8>) -> tensor<2x2x3x2xi8>
    func.return %p : tensor<2x2x3x2xi8>
  }
  func.func @avg_pool2d(%x: tensor<2x4x4x2xi8>) -> tensor<2x2x2x2xi8> {
    %0 = "tosa.const_shape"() <{values = dense<[0, 0, 1, 0, 1, 0, 0, 0]> : tensor<8xindex>}> : () -> !tosa.shape<8>
    %1 = "tosa.const"() <{values = dense<3> : tensor<1xi8>}> : () -> tensor<1xi8>
    %2 = "tosa.pad"(%x, %0, %1) : (tensor<2x4x4x2xi8>, !tosa.shape<8>, tensor<1xi8>) -> tensor<2x5x5x2xi8>
    %3 = "tosa.const"() <{values = dense<3> : tensor<1xi8>}> : () -> tensor<1xi8>
    %4 = "tosa.const"() <{values = dense<-1> : tensor<1xi8>}> : () -> tensor<1xi8>
    %p = tosa.avg_pool2d %2, %3, %4 {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, acc_type = i32} : (tensor<2x5x5x2xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<2x2x2x2xi8>
    func.return %p : tensor<2x2x2x2xi8>
  }
  func.func @avg_pool2d_override(%x: tensor<2x4x4x2xi8>) -> tensor<2x2x2x2xi8> {
    %0 = "tosa.const"() <{values = dense<1> : tensor<2x2x2x1xi8>}> : () -> tensor<2x2x2x1xi8>
    %1 = "tosa.const"() <{values = dense<0> : tensor<2xi32>}> : () -> tensor<2xi32>
    %2 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %3 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %4 = "tosa.depthwise_conv2d"(%x, %0, %1, %2, %3) <{pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, acc_type = i32}> : (tensor<2x4x4x2xi8>, tensor<2x2x2x1xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<2x2x2x2xi32>
    %5 = "tosa.const"() <{values = dense<1431655766> : tensor<1xi32>}> : () -> tensor<1xi32>
    %6 = "tosa.const"() <{values = dense<32> : tensor<1xi8>}> : () -> tensor<1xi8>
    %7 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
    %8 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %p = tosa.rescale %4, %5, %6, %7, %8 {scale32 = true, rounding_mode = SINGLE_ROUND, per_channel = false, input_unsigned = false, output_unsigned = false} : (tensor<2x2x2x2xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<2x2x2x2xi8>
    func.return %p : tensor<2x2x2x2xi8>
  }
  func.func @concat(%x: tensor<2x2xi8>, %y: tensor<2x3xi8>) -> tensor<2x5xi8> {
    %c = tosa.concat %x, %y {axis = 1 : i32} : (tensor<2x2xi8>, tensor<2x3xi8>) -> tensor<2x5xi8>
    func.return %c : tensor<2x5xi8>
  }
  func.func @resize_nearest(%x: tensor<2x2x3x1xi8>) -> tensor<2x4x6x1xi8> {
    %0 = "tosa.const_shape"() <{values = dense<[8, 4, 12, 6]> : tensor<4xindex>}> : () -> !tosa.shape<4>
    %1 = "tosa.const_shape"() <{values = dense<[-2, -3]> : tensor<2xindex>}> : () -> !tosa.shape<2>
    %2 = "tosa.const_shape"() <{values = dense<[2, 3]> : tensor<2xindex>}> : () -> !tosa.shape<2>
    %r = "tosa.resize"(%x, %0, %1, %2) <{mode = #tosa.resize_mode<NEAREST_NEIGHBOR>}> : (tensor<2x2x3x1xi8>, !tosa.shape<4>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<2x4x6x1xi8>
    func.return %r : tensor<2x4x6x1xi8>
  }
  func.func @shift(%x: tensor<2x3xi32>) -> tensor<2x3xi32> {
    %0 = "tosa.const"() <{values = dense<4> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %l = "tosa.logical_left_shift"(%x, %0) : (tensor<2x3xi32>, tensor<1x1xi32>) -> tensor<2x3xi32>
    %1 = "tosa.const"() <{values = dense<31> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %r = "tosa.arithmetic_right_shift"(%l, %1) <{round = false}> : (tensor<2x3xi32>, tensor<1x1xi32>) -> tensor<2x3xi32>
    func.return %r : tensor<2x3xi32>
  }
  func.func @bitwise(%x: tensor<2x3xi32>) -> tensor<2x3xi32> {
    %0 = "tosa.const"() <{values = dense<255> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %a = "tosa.bitwise_xor"(%x, %0) : (tensor<2x3xi32>, tensor<1x1xi32>) -> tensor<2x3xi32>
    func.return %a : tensor<2x3xi32>
  }
  func.func @compare(%x: tensor<2x3xi32>) -> tensor<2x3xi32> {
    %0 = "tosa.const"() <{values = dense<100> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %1 = "tosa.equal"(%x, %0) : (tensor<2x3xi32>, tensor<1x1xi32>) -> tensor<2x3xi1>
    %2 = "tosa.logical_not"(%1) : (tensor<2x3xi1>) -> tensor<2x3xi1>
    %c = "tosa.cast"(%2) : (tensor<2x3xi1>) -> tensor<2x3xi32>
    func.return %c : tensor<2x3xi32>
  }
  func.func @tile(%x: tensor<2x3xi32>) -> tensor<2x6xi32> {
    %0 = "tosa.const_shape"() <{values = dense<[1, 2]> : tensor<2xindex>}> : () -> !tosa.shape<2>
    %t = "tosa.tile"(%x, %0) : (tensor<2x3xi32>, !tosa.shape<2>) -> tensor<2x6xi32>
    func.return %t : tensor<2x6xi32>
  }
  func.func @table(%x: tensor<2x3xi8>) -> tensor<2x3xi8> {
    %0 = "tosa.const"() <{values = dense<"0x80878E959CA3AAB1B8BFC6CDD4DBE2E9F0F7FE050C131A21282F363D444B525960676E757C838A91989FA6ADB4BBC2C9D0D7DEE5ECF3FA01080F161D242B323940474E555C636A71787F868D949BA2A9B0B7BEC5CCD3DAE1E8EFF6FD040B121920272E353C434A51585F666D747B828990979EA5ACB3BAC1C8CFD6DDE4EBF2F900070E151C232A31383F464D545B626970777E858C939AA1A8AFB6BDC4CBD2D9E0E7EEF5FC030A11181F262D343B424950575E656C737A81888F969DA4ABB2B9C0C7CED5DCE3EAF1F8FF060D141B222930373E454C535A61686F767D848B9299A0A7AEB5BCC3CAD1D8DFE6EDF4FB020910171E252C333A41484F565D646B7279"> : tensor<256xi8>}> : () -> tensor<256xi8>
    %t = "tosa.table"(%x, %0) : (tensor<2x3xi8>, tensor<256xi8>) -> tensor<2x3xi8>
    func.return %t : tensor<2x3xi8>
  }
  func.func @softmax(%x: tensor<2x4xi8>) -> tensor<2x4xi8> {
    %0 = tosa.reduce_max %x {axis = 1 : i32} : (tensor<2x4xi8>) -> tensor<2x1xi8>
    %1 = "tosa.cast"(%0) : (tensor<2x1xi8>) -> tensor<2x1xi32>
    %2 = "tosa.cast"(%x) : (tensor<2x4xi8>) -> tensor<2x4xi32>
    %3 = tosa.sub %1, %2 : (tensor<2x1xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %4 = "tosa.const"() <{values = dense<"0x00000100000001000000010000000100000001000000010000000100000001000080000000800000008000000080000000800000008000000080000000800000004000000040000000400000004000000040000000400000004000000040000000200000002000000020000000200000002000000020000000200000002000000010000000100000001000000010000000100000001000000010000000100000000800000008000000080000000800000008000000080000000800000008000000040000000400000004000000040000000400000004000000040000000400000002000000020000000200000002000000020000000200000002000000020000000100000001000000010000000100000001000000010000000100000001000080000000800000008000000080000000800000008000000080000000800000004000000040000000400000004000000040000000400000004000000040000000200000002000000020000000200000002000000020000000200000002000000010000000100000001000000010000000100000001000000010000000100000000800000008000000080000000800000008000000080000000800000008000000040000000400000004000000040000000400000004000000040000000400000002000000020000000200000002000000020000000200000002000000020000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000"> : tensor<1x256x1xi32>}> : () -> tensor<1x256x1xi32>
    %5 = "tosa.const_shape"() <{values = dense<[1, 8]> : tensor<2xindex>}> : () -> !tosa.shape<2>
    %6 = "tosa.reshape"(%3, %5) : (tensor<2x4xi32>, !tosa.shape<2>) -> tensor<1x8xi32>
    %7 = "tosa.gather"(%4, %6) : (tensor<1x256x1xi32>, tensor<1x8xi32>) -> tensor<1x8x1xi32>
    %8 = "tosa.const_shape"() <{values = dense<[2, 4]> : tensor<2xindex>}> : () -> !tosa.shape<2>
    %9 = "tosa.reshape"(%7, %8) : (tensor<1x8x1xi32>, !tosa.shape<2>) -> tensor<2x4xi32>
    %10 = tosa.reduce_sum %9 {axis = 1 : i32} : (tensor<2x4xi32>) -> tensor<2x1xi32>
    %11 = "tosa.greater_equal"(%9, %10) : (tensor<2x4xi32>, tensor<2x1xi32>) -> tensor<2x4xi1>
    %12 = tosa.sub %9, %10 : (tensor<2x4xi32>, tensor<2x1xi32>) -> tensor<2x4xi32>
    %13 = "tosa.select"(%11, %12, %9) : (tensor<2x4xi1>, tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %14 = "tosa.cast"(%11) : (tensor<2x4xi1>) -> tensor<2x4xi32>
    %15 = "tosa.const"() <{values = dense<0> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %16 = tosa.sub %10, %13 : (tensor<2x1xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %17 = "tosa.greater_equal"(%13, %16) : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi1>
    %18 = "tosa.select"(%17, %15, %10) : (tensor<2x4xi1>, tensor<1x1xi32>, tensor<2x1xi32>) -> tensor<2x4xi32>
    %19 = tosa.sub %13, %16 : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %20 = tosa.add %19, %18 : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %21 = tosa.add %14, %14 : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %22 = "tosa.cast"(%17) : (tensor<2x4xi1>) -> tensor<2x4xi32>
    %23 = tosa.add %21, %22 : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %24 = tosa.sub %10, %20 : (tensor<2x1xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %25 = "tosa.greater_equal"(%20, %24) : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi1>
    %26 = "tosa.select"(%25, %15, %10) : (tensor<2x4xi1>, tensor<1x1xi32>, tensor<2x1xi32>) -> tensor<2x4xi32>
    %27 = tosa.sub %20, %24 : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %28 = tosa.add %27, %26 : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %29 = tosa.add %23, %23 : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %30 = "tosa.cast"(%25) : (tensor<2x4xi1>) -> tensor<2x4xi32>
    %31 = tosa.add %29, %30 : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %32 = tosa.sub %10, %28 : (tensor<2x1xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %33 = "tosa.greater_equal"(%28, %32) : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi1>
    %34 = "tosa.select"(%33, %15, %10) : (tensor<2x4xi1>, tensor<1x1xi32>, tensor<2x1xi32>) -> tensor<2x4xi32>
    %35 = tosa.sub %28, %32 : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %36 = tosa.add %35, %34 : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %37 = tosa.add %31, %31 : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %38 = "tosa.cast"(%33) : (tensor<2x4xi1>) -> tensor<2x4xi32>
    %39 = tosa.add %37, %38 : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %40 = tosa.sub %10, %36 : (tensor<2x1xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %41 = "tosa.greater_equal"(%36, %40) : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi1>
    %42 = "tosa.select"(%41, %15, %10) : (tensor<2x4xi1>, tensor<1x1xi32>, tensor<2x1xi32>) -> tensor<2x4xi32>
    %43 = tosa.sub %36, %40 : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %44 = tosa.add %43, %42 : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %45 = tosa.add %39, %39 : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %46 = "tosa.cast"(%41) : (tensor<2x4xi1>) -> tensor<2x4xi32>
    %47 = tosa.add %45, %46 : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %48 = tosa.sub %10, %44 : (tensor<2x1xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %49 = "tosa.greater_equal"(%44, %48) : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi1>
    %50 = "tosa.select"(%49, %15, %10) : (tensor<2x4xi1>, tensor<1x1xi32>, tensor<2x1xi32>) -> tensor<2x4xi32>
    %51 = tosa.sub %44, %48 : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %52 = tosa.add %51, %50 : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %53 = tosa.add %47, %47 : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %54 = "tosa.cast"(%49) : (tensor<2x4xi1>) -> tensor<2x4xi32>
    %55 = tosa.add %53, %54 : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %56 = tosa.sub %10, %52 : (tensor<2x1xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %57 = "tosa.greater_equal"(%52, %56) : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi1>
    %58 = "tosa.select"(%57, %15, %10) : (tensor<2x4xi1>, tensor<1x1xi32>, tensor<2x1xi32>) -> tensor<2x4xi32>
    %59 = tosa.sub %52, %56 : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %60 = tosa.add %59, %58 : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %61 = tosa.add %55, %55 : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %62 = "tosa.cast"(%57) : (tensor<2x4xi1>) -> tensor<2x4xi32>
    %63 = tosa.add %61, %62 : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %64 = tosa.sub %10, %60 : (tensor<2x1xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %65 = "tosa.greater_equal"(%60, %64) : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi1>
    %66 = "tosa.select"(%65, %15, %10) : (tensor<2x4xi1>, tensor<1x1xi32>, tensor<2x1xi32>) -> tensor<2x4xi32>
    %67 = tosa.sub %60, %64 : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %68 = tosa.add %67, %66 : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %69 = tosa.add %63, %63 : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %70 = "tosa.cast"(%65) : (tensor<2x4xi1>) -> tensor<2x4xi32>
    %71 = tosa.add %69, %70 : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %72 = tosa.sub %10, %68 : (tensor<2x1xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %73 = "tosa.greater_equal"(%68, %72) : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi1>
    %74 = "tosa.select"(%73, %15, %10) : (tensor<2x4xi1>, tensor<1x1xi32>, tensor<2x1xi32>) -> tensor<2x4xi32>
    %75 = tosa.sub %68, %72 : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %76 = tosa.add %75, %74 : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %77 = tosa.add %71, %71 : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %78 = "tosa.cast"(%73) : (tensor<2x4xi1>) -> tensor<2x4xi32>
    %79 = tosa.add %77, %78 : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %80 = tosa.sub %10, %76 : (tensor<2x1xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %81 = "tosa.greater_equal"(%76, %80) : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi1>
    %82 = "tosa.cast"(%81) : (tensor<2x4xi1>) -> tensor<2x4xi32>
    %83 = tosa.add %79, %82 : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
    %84 = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
    %85 = "tosa.const"() <{values = dense<30> : tensor<1xi8>}> : () -> tensor<1xi8>
    %86 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
    %87 = "tosa.const"() <{values = dense<-128> : tensor<1xi8>}> : () -> tensor<1xi8>
    %s = tosa.rescale %83, %84, %85, %86, %87 {scale32 = true, rounding_mode = SINGLE_ROUND, per_channel = false, input_unsigned = false, output_unsigned = false} : (tensor<2x4xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<2x4xi8>
    func.return %s : tensor<2x4xi8>
  }
  func.func @more_elementwise(%x: tensor<2x3xi32>, %c: tensor<1x1xi32>) -> (tensor<2x3xi1>, tensor<2x3xi32>, tensor<2x3xi32>) {
    %g = "tosa.greater"(%x, %c) : (tensor<2x3xi32>, tensor<1x1xi32>) -> tensor<2x3xi1>
    %a = "tosa.bitwise_and"(%x, %c) : (tensor<2x3xi32>, tensor<1x1xi32>) -> tensor<2x3xi32>
    %o = "tosa.bitwise_or"(%x, %c) : (tensor<2x3xi32>, tensor<1x1xi32>) -> tensor<2x3xi32>
    %lo = "tosa.minimum"(%o, %c) : (tensor<2x3xi32>, tensor<1x1xi32>) -> tensor<2x3xi32>
    %hi = "tosa.maximum"(%lo, %a) : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
    func.return %g, %hi, %o : tensor<2x3xi1>, tensor<2x3xi32>, tensor<2x3xi32>
  }
}
