// dg-run on the CNN ops in their textual form; every expected value is computed by hand
// from docs/dghw.md. The input is the 3x3 map [[1, 2, 3], [4, 5, 6], [7, 8, 9]] (NHWC, C = 1).
// RUN: python -c "import numpy as np; np.save('%t.x.npy', np.arange(1, 10, dtype=np.int8).reshape(1, 3, 3, 1))"
// RUN: python -c "import numpy as np; np.save('%t.row.npy', np.array([[[0, 0, -4, 127], [5, 5, 4, 3]]], dtype=np.int8))"
// RUN: dg-run %s -i %t.x.npy -i %t.row.npy -o %t.max.npy -o %t.avg.npy -o %t.override.npy -o %t.include.npy -o %t.exclude.npy -o %t.depthwise.npy -o %t.concat.npy -o %t.resize.npy -o %t.negate.npy -o %t.softmax.npy
// RUN: python -c "import numpy as np; [print(n, np.load(f'%t.{n}.npy').reshape(-1).tolist()) for n in ['max', 'avg', 'override', 'include', 'exclude', 'depthwise', 'concat', 'resize', 'negate', 'softmax']]" | filecheck %s

// kernel 2, stride 2, ceil mode: windows {0,1} and {2} (overhang) per axis.
// CHECK: max [5, 6, 8, 9]
// Same windows, count_include_pad without padding, x - 1: sums 8, 7, 13, 8 over divisors
// 4, 2, 2, 1 (the overhang is not counted): 2, 3.5, 6.5, 8, rounded half away from zero.
// CHECK-NEXT: avg [2, 4, 7, 8]
// divisor_override = 3: 8/3, 7/3, 13/3, 8/3.
// CHECK-NEXT: override [3, 2, 4, 3]
// kernel 3, stride 2, pad 1: sums 8, 12, 20, 24 of x - 1 over the padded area 9 ...
// CHECK-NEXT: include [1, 1, 2, 3]
// ... or over the 4 input elements of each window.
// CHECK-NEXT: exclude [2, 3, 5, 6]
// 2x2 depthwise weights [[1, 0], [0, -1]] (weight_zp 0), input_zp 1, bias 100, stride 1:
// 100 + (x[y][x] - 1) - (x[y+1][x+1] - 1) = 100 - 4 everywhere.
// CHECK-NEXT: depthwise [96, 96, 96, 96]
// Along W (device axis 2): each row twice.
// CHECK-NEXT: concat [1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6, 7, 8, 9, 7, 8, 9]
// 3x3 -> 2x6, nearest: rows floor(oy * 3 / 2) = 0, 1; columns floor(ox / 2) = 0, 0, 1, 1, 2, 2.
// CHECK-NEXT: resize [1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6]
// table[j] = clamp(-(j - 128)): negation, with -(-128) clamped to 127.
// CHECK-NEXT: negate [0, 0, 4, -127, -5, -5, -4, -3]
// exp_table[k] = 2^16 >> k (0 for k >= 17), rows along device axis 2:
// row 0: max 127, k = [127, 127, 131, 0], e = [0, 0, 0, 65536]: 256 * e / sum = 256 -> clamped 127.
// row 1: max 5, k = [0, 0, 1, 2], e = [65536, 65536, 32768, 16384], sum = 180224:
// floor((512 e + sum) / (2 sum)) = [93, 93, 47, 23] (46.55 rounds up), minus 128.
// CHECK-NEXT: softmax [-128, -128, -128, 127, -35, -35, -81, -105]

// A table whose entry 0 is 0 lets a row's exp sum be 0 (row 0 then sums to 0): a diagnostic.
// RUN: sed 's/exp_table = array<i32: 65536,/exp_table = array<i32: 0,/' %s > %t.zero.mlir
// RUN: not dg-run %t.zero.mlir -i %t.x.npy -i %t.row.npy 2>&1 | filecheck %s --check-prefix=ZERO
// ZERO: dg-run: error: dghw.softmax: exp sums 0..49152 leave [1, 2^31 - 1]

builtin.module {
  func.func @main(%x: tensor<?x3x3x1xi8>, %row: tensor<?x2x4xi8>) -> (tensor<?x2x2x1xi8>, tensor<?x2x2x1xi8>, tensor<?x2x2x1xi8>, tensor<?x2x2x1xi8>, tensor<?x2x2x1xi8>, tensor<?x2x2x1xi32>, tensor<?x3x6x1xi8>, tensor<?x2x6x1xi8>, tensor<?x2x4xi8>, tensor<?x2x4xi8>) {
    %max_ceil = dghw.max_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>} : tensor<?x3x3x1xi8> -> tensor<?x2x2x1xi8>
    %avg_ceil = dghw.avg_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, count_include_pad = true, input_zp = 1 : i32, output_zp = 0 : i32} : tensor<?x3x3x1xi8> -> tensor<?x2x2x1xi8>
    %avg_override = dghw.avg_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, count_include_pad = true, divisor_override = 3 : i64, input_zp = 1 : i32, output_zp = 0 : i32} : tensor<?x3x3x1xi8> -> tensor<?x2x2x1xi8>
    %avg_include_pad = dghw.avg_pool2d %x {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>, count_include_pad = true, input_zp = 1 : i32, output_zp = 0 : i32} : tensor<?x3x3x1xi8> -> tensor<?x2x2x1xi8>
    %avg_exclude_pad = dghw.avg_pool2d %x {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>, count_include_pad = false, input_zp = 1 : i32, output_zp = 0 : i32} : tensor<?x3x3x1xi8> -> tensor<?x2x2x1xi8>
    %depthwise_w = dghw.constant {value = dense<[[[1], [0]], [[0], [-1]]]> : tensor<2x2x1xi8>} : tensor<2x2x1xi8>
    %depthwise_b = dghw.constant {value = dense<[100]> : tensor<1xi32>} : tensor<1xi32>
    %depthwise = dghw.depthwise_conv2d %x, %depthwise_w, %depthwise_b {stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, input_zp = 1 : i32, weight_zp = 0 : i32} : (tensor<?x3x3x1xi8>, tensor<2x2x1xi8>, tensor<1xi32>) -> tensor<?x2x2x1xi32>
    %concat = dghw.concat %x, %x {axis = 2 : i64} : (tensor<?x3x3x1xi8>, tensor<?x3x3x1xi8>) -> tensor<?x3x6x1xi8>
    %resize = dghw.resize_nearest %x {mode = "nearest"} : tensor<?x3x3x1xi8> -> tensor<?x2x6x1xi8>
    %negate = dghw.table %row {table = array<i8: 127, 127, 126, 125, 124, 123, 122, 121, 120, 119, 118, 117, 116, 115, 114, 113, 112, 111, 110, 109, 108, 107, 106, 105, 104, 103, 102, 101, 100, 99, 98, 97, 96, 95, 94, 93, 92, 91, 90, 89, 88, 87, 86, 85, 84, 83, 82, 81, 80, 79, 78, 77, 76, 75, 74, 73, 72, 71, 70, 69, 68, 67, 66, 65, 64, 63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43, 42, 41, 40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, -1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12, -13, -14, -15, -16, -17, -18, -19, -20, -21, -22, -23, -24, -25, -26, -27, -28, -29, -30, -31, -32, -33, -34, -35, -36, -37, -38, -39, -40, -41, -42, -43, -44, -45, -46, -47, -48, -49, -50, -51, -52, -53, -54, -55, -56, -57, -58, -59, -60, -61, -62, -63, -64, -65, -66, -67, -68, -69, -70, -71, -72, -73, -74, -75, -76, -77, -78, -79, -80, -81, -82, -83, -84, -85, -86, -87, -88, -89, -90, -91, -92, -93, -94, -95, -96, -97, -98, -99, -100, -101, -102, -103, -104, -105, -106, -107, -108, -109, -110, -111, -112, -113, -114, -115, -116, -117, -118, -119, -120, -121, -122, -123, -124, -125, -126, -127>} : tensor<?x2x4xi8> -> tensor<?x2x4xi8>
    %softmax = dghw.softmax %row {axis = 2 : i64, exp_table = array<i32: 65536, 32768, 16384, 8192, 4096, 2048, 1024, 512, 256, 128, 64, 32, 16, 8, 4, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : tensor<?x2x4xi8> -> tensor<?x2x4xi8>
    func.return %max_ceil, %avg_ceil, %avg_override, %avg_include_pad, %avg_exclude_pad, %depthwise, %concat, %resize, %negate, %softmax : tensor<?x2x2x1xi8>, tensor<?x2x2x1xi8>, tensor<?x2x2x1xi8>, tensor<?x2x2x1xi8>, tensor<?x2x2x1xi8>, tensor<?x2x2x1xi32>, tensor<?x3x6x1xi8>, tensor<?x2x6x1xi8>, tensor<?x2x4xi8>, tensor<?x2x4xi8>
  }
}
