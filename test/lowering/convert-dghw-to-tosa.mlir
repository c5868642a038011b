// convert-dghw-to-tosa: one function per pattern (one per dghw op), at batch 2.
// The second RUN line checks that tosa-opt (tosa-tools) validates all of it for the
// integer profile; test/runtime/test_tosa_reference.py runs it on the reference model.
// RUN: dg-opt %s -p 'convert-dghw-to-tosa{batch=2}' | filecheck %s
// RUN: dg-opt %s -p 'convert-dghw-to-tosa{batch=2}' | tosa-opt --tosa-attach-target=profiles=pro_int --tosa-validate | filecheck %s --check-prefix=VALID
// RUN: not dg-opt %s -p 'convert-dghw-to-tosa{batch=0}' 2>&1 | filecheck %s --check-prefix=BATCH

// VALID: module attributes {tosa.target_env = #tosa.target_env<specification_version = "1.0", level = "8k", profiles = [pro_int], extensions = []>}
// VALID-NOT: {{= "?}}dghw.
// BATCH: error: pass 'convert-dghw-to-tosa' failed: {{.*}}batch must be >= 1, got 0

// The floor-mode window count needs only 1 of the 2 bottom padding rows: TOSA wants it exact.
// CHECK-LABEL: func.func @conv2d(%x: tensor<2x5x5x3xi8> {dghw.scale = 2.000000e-02 : f64, dghw.zero_point = 3 : i32}) -> tensor<2x3x3x4xi32>
// CHECK:         %[[IZP:.*]] = "tosa.const"() <{values = dense<3> : tensor<1xi8>}>
// CHECK-NEXT:    %[[WZP:.*]] = "tosa.const"() <{values = dense<-1> : tensor<1xi8>}>
// CHECK-NEXT:    %c = "tosa.conv2d"(%x, %w, %b, %[[IZP]], %[[WZP]]) <{pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, acc_type = i32}>
func.func @conv2d(%x: tensor<?x5x5x3xi8> {dghw.scale = 0.02 : f64, dghw.zero_point = 3 : i32}) -> tensor<?x3x3x4xi32> {
  %w = dghw.constant {value = dense<1> : tensor<4x3x3x3xi8>} : tensor<4x3x3x3xi8>
  %b = dghw.constant {value = dense<7> : tensor<4xi32>} : tensor<4xi32>
  %c = dghw.conv2d %x, %w, %b {stride = array<i64: 2, 2>, pad = array<i64: 1, 2, 1, 1>, input_zp = 3 : i32, weight_zp = -1 : i32} : (tensor<?x5x5x3xi8>, tensor<4x3x3x3xi8>, tensor<4xi32>) -> tensor<?x3x3x4xi32>
  func.return %c : tensor<?x3x3x4xi32>
}

// CHECK-LABEL: func.func @depthwise_conv2d
// CHECK:         %[[W:.*]] = "tosa.reshape"(%w, %{{.*}}) : (tensor<3x3x2xi8>, !tosa.shape<4>) -> tensor<3x3x2x1xi8>
// CHECK:         "tosa.depthwise_conv2d"(%x, %[[W]], %b, %{{.*}}, %{{.*}}) <{pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, acc_type = i32}>
func.func @depthwise_conv2d(%x: tensor<?x4x4x2xi8>) -> tensor<?x4x4x2xi32> {
  %w = dghw.constant {value = dense<1> : tensor<3x3x2xi8>} : tensor<3x3x2xi8>
  %b = dghw.constant {value = dense<0> : tensor<2xi32>} : tensor<2xi32>
  %c = dghw.depthwise_conv2d %x, %w, %b {stride = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, input_zp = 0 : i32, weight_zp = 0 : i32} : (tensor<?x4x4x2xi8>, tensor<3x3x2xi8>, tensor<2xi32>) -> tensor<?x4x4x2xi32>
  func.return %c : tensor<?x4x4x2xi32>
}

// TOSA 1.0 has no fully_connected: a 1x1 conv2d over [rows, 1, 1, K].
// CHECK-LABEL: func.func @fully_connected
// CHECK:         %[[X:.*]] = "tosa.reshape"(%x, %{{.*}}) : (tensor<2x6xi8>, !tosa.shape<4>) -> tensor<2x1x1x6xi8>
// CHECK:         %[[W:.*]] = "tosa.reshape"(%w, %{{.*}}) : (tensor<3x6xi8>, !tosa.shape<4>) -> tensor<3x1x1x6xi8>
// CHECK:         %[[ACC:.*]] = "tosa.conv2d"(%[[X]], %[[W]], %b, %{{.*}}, %{{.*}}) {{.*}} -> tensor<2x1x1x3xi32>
// CHECK:         %y = "tosa.reshape"(%[[ACC]], %{{.*}}) : (tensor<2x1x1x3xi32>, !tosa.shape<2>) -> tensor<2x3xi32>
func.func @fully_connected(%x: tensor<?x6xi8>) -> tensor<?x3xi32> {
  %w = dghw.constant {value = dense<2> : tensor<3x6xi8>} : tensor<3x6xi8>
  %b = dghw.constant {value = dense<-3> : tensor<3xi32>} : tensor<3xi32>
  %y = dghw.fully_connected %x, %w, %b {input_zp = -5 : i32, weight_zp = 1 : i32} : (tensor<?x6xi8>, tensor<3x6xi8>, tensor<3xi32>) -> tensor<?x3xi32>
  func.return %y : tensor<?x3xi32>
}

// CHECK-LABEL: func.func @rescale
// CHECK:         "tosa.const"() <{values = dense<[1073741824, 1500000000]> : tensor<2xi32>}>
// CHECK-NEXT:    "tosa.const"() <{values = dense<[33, 40]> : tensor<2xi8>}>
// CHECK-NEXT:    "tosa.const"() <{values = dense<0> : tensor<1xi32>}>
// CHECK-NEXT:    "tosa.const"() <{values = dense<-5> : tensor<1xi8>}>
// CHECK-NEXT:    %[[R:.*]] = tosa.rescale %x, {{.*}} {scale32 = true, rounding_mode = SINGLE_ROUND, per_channel = true, input_unsigned = false, output_unsigned = false}
// CHECK-NEXT:    %r = tosa.clamp %[[R]] {min_val = -5 : i8, max_val = 127 : i8}
func.func @rescale(%x: tensor<?x2xi32>) -> tensor<?x2xi8> {
  %r = dghw.rescale %x {multiplier = array<i32: 1073741824, 1500000000>, shift = array<i32: 33, 40>, input_zp = 0 : i32, output_zp = -5 : i32, clamp_min = -5 : i32, clamp_max = 127 : i32} : tensor<?x2xi32> -> tensor<?x2xi8>
  func.return %r : tensor<?x2xi8>
}

// CHECK-LABEL: func.func @add
// CHECK-NEXT:    %s = tosa.add %x, %y : (tensor<2x2xi32>, tensor<2x2xi32>) -> tensor<2x2xi32>
func.func @add(%x: tensor<?x2xi32>, %y: tensor<?x2xi32>) -> tensor<?x2xi32> {
  %s = dghw.add %x, %y : (tensor<?x2xi32>, tensor<?x2xi32>) -> tensor<?x2xi32>
  func.return %s : tensor<?x2xi32>
}

// Both factors are centred by a RESCALE by 1 (2^30 >> 30) with their zero points.
// CHECK-LABEL: func.func @mul
// CHECK:         %[[X:.*]] = tosa.rescale %x, {{.*}} -> tensor<2x2x3xi32>
// CHECK:         %[[C:.*]] = tosa.rescale %c, {{.*}} -> tensor<1x1x3xi32>
// CHECK:         %p = tosa.mul %[[X]], %[[C]], %{{.*}} : (tensor<2x2x3xi32>, tensor<1x1x3xi32>, tensor<1xi8>) -> tensor<2x2x3xi32>
func.func @mul(%x: tensor<?x2x3xi8>) -> tensor<?x2x3xi32> {
  %c = dghw.constant {value = dense<[[[1, 2, 3]]]> : tensor<1x1x3xi8>} : tensor<1x1x3xi8>
  %p = dghw.mul %x, %c {input_zp = 4 : i32, constant_zp = 0 : i32} : (tensor<?x2x3xi8>, tensor<1x1x3xi8>) -> tensor<?x2x3xi32>
  func.return %p : tensor<?x2x3xi32>
}

// CHECK-LABEL: func.func @matmul
// CHECK:         "tosa.matmul"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (tensor<4x3x4xi8>, tensor<4x4x5xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<4x3x5xi32>
// CHECK:         %m = "tosa.reshape"
func.func @matmul(%a: tensor<?x2x3x4xi8>, %b: tensor<?x2x4x5xi8>) -> tensor<?x2x3x5xi32> {
  %m = dghw.matmul %a, %b {lhs_zp = 1 : i32, rhs_zp = -2 : i32} : (tensor<?x2x3x4xi8>, tensor<?x2x4x5xi8>) -> tensor<?x2x3x5xi32>
  func.return %m : tensor<?x2x3x5xi32>
}

// CHECK-LABEL: func.func @reshape
// CHECK-NEXT:    %[[S:.*]] = "tosa.const_shape"() <{values = dense<[2, 6]> : tensor<2xindex>}> : () -> !tosa.shape<2>
// CHECK-NEXT:    %r = "tosa.reshape"(%x, %[[S]])
func.func @reshape(%x: tensor<?x2x3xi8>) -> tensor<?x6xi8> {
  %r = dghw.reshape %x : tensor<?x2x3xi8> -> tensor<?x6xi8>
  func.return %r : tensor<?x6xi8>
}

// CHECK-LABEL: func.func @transpose
// CHECK-NEXT:    %t = "tosa.transpose"(%x) <{perms = array<i32: 0, 2, 1>}>
func.func @transpose(%x: tensor<?x2x3xi8>) -> tensor<?x3x2xi8> {
  %t = dghw.transpose %x {perm = array<i64: 0, 2, 1>} : tensor<?x2x3xi8> -> tensor<?x3x2xi8>
  func.return %t : tensor<?x3x2xi8>
}

// CHECK-LABEL: func.func @slice
// CHECK-NEXT:    "tosa.const_shape"() <{values = dense<[0, 2, 0]> : tensor<3xindex>}>
// CHECK-NEXT:    "tosa.const_shape"() <{values = dense<[2, 4, 3]> : tensor<3xindex>}>
// CHECK-NEXT:    %s = "tosa.slice"(%x
func.func @slice(%x: tensor<?x8x3xi8>) -> tensor<?x4x3xi8> {
  %s = dghw.slice %x {axis = 1 : i64, start = 2 : i64, end = 6 : i64} : tensor<?x8x3xi8> -> tensor<?x4x3xi8>
  func.return %s : tensor<?x4x3xi8>
}

// Floor mode: no window reads row 4, so it is sliced off; column 4 is read, and the last
// window's overhang becomes TOSA padding (skipped, as dghw does).
// CHECK-LABEL: func.func @max_pool2d
// CHECK:         %[[X:.*]] = "tosa.slice"(%x, {{.*}}) -> tensor<2x4x5x2xi8>
// CHECK-NEXT:    %p = tosa.max_pool2d %[[X]] {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 1>}
func.func @max_pool2d(%x: tensor<?x5x5x2xi8>) -> tensor<?x2x3x2xi8> {
  %p = dghw.max_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>} : tensor<?x5x5x2xi8> -> tensor<?x2x3x2xi8>
  func.return %p : tensor<?x2x3x2xi8>
}

// count_include_pad: an explicit tosa.pad of input_zp, so TOSA counts the padding.
// CHECK-LABEL: func.func @avg_pool2d
// CHECK-NEXT:    "tosa.const_shape"() <{values = dense<[0, 0, 1, 0, 1, 0, 0, 0]> : tensor<8xindex>}>
// CHECK-NEXT:    "tosa.const"() <{values = dense<3> : tensor<1xi8>}>
// CHECK-NEXT:    %[[P:.*]] = "tosa.pad"(%x, {{.*}}) -> tensor<2x5x5x2xi8>
// CHECK:         %p = tosa.avg_pool2d %[[P]], {{.*}} {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, acc_type = i32}
func.func @avg_pool2d(%x: tensor<?x4x4x2xi8>) -> tensor<?x2x2x2xi8> {
  %p = dghw.avg_pool2d %x {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, pad = array<i64: 1, 0, 1, 0>, count_include_pad = true, input_zp = 3 : i32, output_zp = -1 : i32} : tensor<?x4x4x2xi8> -> tensor<?x2x2x2xi8>
  func.return %p : tensor<?x2x2x2xi8>
}

// divisor_override: the window sum (depthwise conv by ones), then a RESCALE by reciprocal_scale(3).
// CHECK-LABEL: func.func @avg_pool2d_override
// CHECK:         %[[SUM:.*]] = "tosa.depthwise_conv2d"(%x, {{.*}}) -> tensor<2x2x2x2xi32>
// CHECK-NEXT:    "tosa.const"() <{values = dense<1431655766> : tensor<1xi32>}>
// CHECK-NEXT:    "tosa.const"() <{values = dense<32> : tensor<1xi8>}>
// CHECK:         %p = tosa.rescale %[[SUM]]
func.func @avg_pool2d_override(%x: tensor<?x4x4x2xi8>) -> tensor<?x2x2x2xi8> {
  %p = dghw.avg_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, count_include_pad = false, divisor_override = 3 : i64, input_zp = 0 : i32, output_zp = 0 : i32} : tensor<?x4x4x2xi8> -> tensor<?x2x2x2xi8>
  func.return %p : tensor<?x2x2x2xi8>
}

// CHECK-LABEL: func.func @concat
// CHECK-NEXT:    %c = tosa.concat %x, %y {axis = 1 : i32}
func.func @concat(%x: tensor<?x2xi8>, %y: tensor<?x3xi8>) -> tensor<?x5xi8> {
  %c = dghw.concat %x, %y {axis = 1 : i64} : (tensor<?x2xi8>, tensor<?x3xi8>) -> tensor<?x5xi8>
  func.return %c : tensor<?x5xi8>
}

// nearest-exact, 2 -> 4 and 3 -> 6: scale [2 H_out, 2 H_in, ...], offset H_in - H_out.
// CHECK-LABEL: func.func @resize_nearest
// CHECK-NEXT:    "tosa.const_shape"() <{values = dense<[8, 4, 12, 6]> : tensor<4xindex>}>
// CHECK-NEXT:    "tosa.const_shape"() <{values = dense<[-2, -3]> : tensor<2xindex>}>
// CHECK-NEXT:    "tosa.const_shape"() <{values = dense<[2, 3]> : tensor<2xindex>}>
// CHECK-NEXT:    %r = "tosa.resize"(%x, {{.*}}) <{mode = #tosa.resize_mode<NEAREST_NEIGHBOR>}>
func.func @resize_nearest(%x: tensor<?x2x3x1xi8>) -> tensor<?x4x6x1xi8> {
  %r = dghw.resize_nearest %x {mode = "nearest-exact"} : tensor<?x2x3x1xi8> -> tensor<?x4x6x1xi8>
  func.return %r : tensor<?x4x6x1xi8>
}

// CHECK-LABEL: func.func @shift
// CHECK-NEXT:    "tosa.const"() <{values = dense<4> : tensor<1x1xi32>}>
// CHECK-NEXT:    %l = "tosa.logical_left_shift"(%x
// CHECK-NEXT:    "tosa.const"() <{values = dense<31> : tensor<1x1xi32>}>
// CHECK-NEXT:    %r = "tosa.arithmetic_right_shift"(%l, %{{.*}}) <{round = false}>
func.func @shift(%x: tensor<?x3xi32>) -> tensor<?x3xi32> {
  %l = dghw.shift %x {direction = "left", shift = 4 : i64} : tensor<?x3xi32> -> tensor<?x3xi32>
  %r = dghw.shift %l {direction = "right", shift = 31 : i64} : tensor<?x3xi32> -> tensor<?x3xi32>
  func.return %r : tensor<?x3xi32>
}

// CHECK-LABEL: func.func @bitwise
// CHECK-NEXT:    "tosa.const"() <{values = dense<255> : tensor<1x1xi32>}>
// CHECK-NEXT:    %a = "tosa.bitwise_xor"(%x
func.func @bitwise(%x: tensor<?x3xi32>) -> tensor<?x3xi32> {
  %a = dghw.bitwise %x {kind = "xor", value = 255 : i64} : tensor<?x3xi32> -> tensor<?x3xi32>
  func.return %a : tensor<?x3xi32>
}

// ne: EQUAL, LOGICAL_NOT, then CAST bool -> i32 (true = 1).
// CHECK-LABEL: func.func @compare
// CHECK:         %[[EQ:.*]] = "tosa.equal"(%x, %{{.*}}) : (tensor<2x3xi32>, tensor<1x1xi32>) -> tensor<2x3xi1>
// CHECK-NEXT:    %[[NE:.*]] = "tosa.logical_not"(%[[EQ]])
// CHECK-NEXT:    %c = "tosa.cast"(%[[NE]]) : (tensor<2x3xi1>) -> tensor<2x3xi32>
func.func @compare(%x: tensor<?x3xi32>) -> tensor<?x3xi32> {
  %c = dghw.compare %x {kind = "ne", value = 100 : i64} : tensor<?x3xi32> -> tensor<?x3xi32>
  func.return %c : tensor<?x3xi32>
}

// Two tensors of the same shape: the TOSA op on both, nothing to broadcast.
// CHECK-LABEL: func.func @bitwise_tensor
// CHECK-NEXT:    %a = "tosa.bitwise_and"(%x, %y) : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT:    %o = "tosa.bitwise_or"(%a, %y) : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
func.func @bitwise_tensor(%x: tensor<?x3xi32>, %y: tensor<?x3xi32>) -> tensor<?x3xi32> {
  %a = dghw.bitwise_tensor %x, %y {kind = "and"} : (tensor<?x3xi32>, tensor<?x3xi32>) -> tensor<?x3xi32>
  %o = dghw.bitwise_tensor %a, %y {kind = "or"} : (tensor<?x3xi32>, tensor<?x3xi32>) -> tensor<?x3xi32>
  func.return %o : tensor<?x3xi32>
}

// lt: GREATER with the operands swapped (y > x), then CAST bool -> i32.
// CHECK-LABEL: func.func @compare_tensor
// CHECK-NEXT:    %[[GT:.*]] = "tosa.greater"(%y, %x) : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi1>
// CHECK-NEXT:    %c = "tosa.cast"(%[[GT]]) : (tensor<2x3xi1>) -> tensor<2x3xi32>
func.func @compare_tensor(%x: tensor<?x3xi32>, %y: tensor<?x3xi32>) -> tensor<?x3xi32> {
  %c = dghw.compare_tensor %x, %y {kind = "lt"} : (tensor<?x3xi32>, tensor<?x3xi32>) -> tensor<?x3xi32>
  func.return %c : tensor<?x3xi32>
}

// CHECK-LABEL: func.func @tile
// CHECK-NEXT:    "tosa.const_shape"() <{values = dense<[1, 2]> : tensor<2xindex>}>
// CHECK-NEXT:    %t = "tosa.tile"(%x
func.func @tile(%x: tensor<?x3xi32>) -> tensor<?x6xi32> {
  %t = dghw.tile %x {multiples = array<i64: 1, 2>} : tensor<?x3xi32> -> tensor<?x6xi32>
  func.return %t : tensor<?x6xi32>
}

// CHECK-LABEL: func.func @table
// CHECK-NEXT:    %[[T:.*]] = "tosa.const"() <{values = dense<"0x80878E959C{{.*}}"> : tensor<256xi8>}>
// CHECK-NEXT:    %t = "tosa.table"(%x, %[[T]]) : (tensor<2x3xi8>, tensor<256xi8>) -> tensor<2x3xi8>
func.func @table(%x: tensor<?x3xi8>) -> tensor<?x3xi8> {
  %t = dghw.table %x {table = array<i8: -128, -121, -114, -107, -100, -93, -86, -79, -72, -65, -58, -51, -44, -37, -30, -23, -16, -9, -2, 5, 12, 19, 26, 33, 40, 47, 54, 61, 68, 75, 82, 89, 96, 103, 110, 117, 124, -125, -118, -111, -104, -97, -90, -83, -76, -69, -62, -55, -48, -41, -34, -27, -20, -13, -6, 1, 8, 15, 22, 29, 36, 43, 50, 57, 64, 71, 78, 85, 92, 99, 106, 113, 120, 127, -122, -115, -108, -101, -94, -87, -80, -73, -66, -59, -52, -45, -38, -31, -24, -17, -10, -3, 4, 11, 18, 25, 32, 39, 46, 53, 60, 67, 74, 81, 88, 95, 102, 109, 116, 123, -126, -119, -112, -105, -98, -91, -84, -77, -70, -63, -56, -49, -42, -35, -28, -21, -14, -7, 0, 7, 14, 21, 28, 35, 42, 49, 56, 63, 70, 77, 84, 91, 98, 105, 112, 119, 126, -123, -116, -109, -102, -95, -88, -81, -74, -67, -60, -53, -46, -39, -32, -25, -18, -11, -4, 3, 10, 17, 24, 31, 38, 45, 52, 59, 66, 73, 80, 87, 94, 101, 108, 115, 122, -127, -120, -113, -106, -99, -92, -85, -78, -71, -64, -57, -50, -43, -36, -29, -22, -15, -8, -1, 6, 13, 20, 27, 34, 41, 48, 55, 62, 69, 76, 83, 90, 97, 104, 111, 118, 125, -124, -117, -110, -103, -96, -89, -82, -75, -68, -61, -54, -47, -40, -33, -26, -19, -12, -5, 2, 9, 16, 23, 30, 37, 44, 51, 58, 65, 72, 79, 86, 93, 100, 107, 114, 121>} : tensor<?x3xi8> -> tensor<?x3xi8>
  func.return %t : tensor<?x3xi8>
}

// TOSA has no softmax: max, exp-table gather, sum, then 1 + 8 quotient bits and a rounding bit.
// CHECK-LABEL: func.func @softmax
// CHECK-NEXT:    %[[M:.*]] = tosa.reduce_max %x {axis = 1 : i32} : (tensor<2x4xi8>) -> tensor<2x1xi8>
// CHECK:         %[[D:.*]] = tosa.sub
// CHECK:         "tosa.const"() <{values = dense<"0x{{.*}}"> : tensor<1x256x1xi32>}>
// CHECK:         "tosa.reshape"(%[[D]], %{{.*}}) : (tensor<2x4xi32>, !tosa.shape<2>) -> tensor<1x8xi32>
// CHECK-NEXT:    "tosa.gather"
// CHECK:         %[[SUM:.*]] = tosa.reduce_sum %{{.*}} {axis = 1 : i32} : (tensor<2x4xi32>) -> tensor<2x1xi32>
// CHECK-COUNT-10: "tosa.greater_equal"
// CHECK-NOT:     "tosa.greater_equal"
// CHECK:         %s = tosa.rescale %{{.*}} : (tensor<2x4xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<2x4xi8>
// CHECK-NEXT:    func.return %s
func.func @softmax(%x: tensor<?x4xi8>) -> tensor<?x4xi8> {
  %s = dghw.softmax %x {axis = 1 : i64, exp_table = array<i32: 65536, 65536, 65536, 65536, 65536, 65536, 65536, 65536, 32768, 32768, 32768, 32768, 32768, 32768, 32768, 32768, 16384, 16384, 16384, 16384, 16384, 16384, 16384, 16384, 8192, 8192, 8192, 8192, 8192, 8192, 8192, 8192, 4096, 4096, 4096, 4096, 4096, 4096, 4096, 4096, 2048, 2048, 2048, 2048, 2048, 2048, 2048, 2048, 1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024, 512, 512, 512, 512, 512, 512, 512, 512, 256, 256, 256, 256, 256, 256, 256, 256, 128, 128, 128, 128, 128, 128, 128, 128, 64, 64, 64, 64, 64, 64, 64, 64, 32, 32, 32, 32, 32, 32, 32, 32, 16, 16, 16, 16, 16, 16, 16, 16, 8, 8, 8, 8, 8, 8, 8, 8, 4, 4, 4, 4, 4, 4, 4, 4, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1>} : tensor<?x4xi8> -> tensor<?x4xi8>
  func.return %s : tensor<?x4xi8>
}
