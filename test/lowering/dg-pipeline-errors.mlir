// What dg-pipeline rejects for the target compiler version, at the op's source location.
// RUN: not dg-opt %s -p 'dg-pipeline{target-version="0.14.0"}' 2>&1 | filecheck %s
// RUN: dg-opt %s -p 'dg-pipeline{target-version="0.15.0"}' --print-debuginfo | filecheck %s --check-prefix=SUPPORTED

// torch.cat (dgq.concat, dghw.concat) needs dg compiler 0.15.0.
// CHECK:     cat.py:4:0: error: pass 'dg-pipeline' failed: 'dgq.concat': dgq.concat requires dg compiler >= 0.15.0, but target_version is 0.14.0
// CHECK-NOT: Traceback
// SUPPORTED: dghw.concat %{{.*}}, %{{.*}} {axis = 3 : i64} {{.*}} loc("cat.py":4:0)
func.func @main(%a: tensor<?x2x3x3xf32>, %b: tensor<?x1x3x3xf32>) -> tensor<?x3x3x3xf32> {
  %aq = dgtorch.quantize_per_tensor %a {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x3x3xf32> -> tensor<?x2x3x3xi8>
  %ad = dgtorch.dequantize_per_tensor %aq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x3x3xi8> -> tensor<?x2x3x3xf32>
  %bq = dgtorch.quantize_per_tensor %b {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x3x3xf32> -> tensor<?x1x3x3xi8>
  %bd = dgtorch.dequantize_per_tensor %bq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x3x3xi8> -> tensor<?x1x3x3xf32>
  %c = dgtorch.cat %ad, %bd {dim = 1 : i64} : (tensor<?x2x3x3xf32>, tensor<?x1x3x3xf32>) -> tensor<?x3x3x3xf32> loc("cat.py":4:0)
  %cq = dgtorch.quantize_per_tensor %c {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x3x3x3xf32> -> tensor<?x3x3x3xi8>
  %cd = dgtorch.dequantize_per_tensor %cq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x3x3x3xi8> -> tensor<?x3x3x3xf32>
  func.return %cd : tensor<?x3x3x3xf32>
}
