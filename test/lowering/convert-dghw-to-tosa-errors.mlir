// What convert-dghw-to-tosa cannot lower fails the pass, naming the op and where it came from.
// RUN: dg-opt %s --split-input-file --verify-diagnostics --allow-unregistered-dialect -p convert-dghw-to-tosa 2>&1 | filecheck %s
// Without --verify-diagnostics the pass fails the run at the first such op, non-zero exit:
// RUN: not dg-opt %s --allow-unregistered-dialect -p convert-dghw-to-tosa 2>&1 | filecheck %s --check-prefix=FAIL
// FAIL: model.py:7:0: error: pass 'convert-dghw-to-tosa' failed: 'builtin.unregistered': no TOSA 1.0 lowering for 'dghw.future_op'
// A batch below 1 fails the pass before any rewrite, at the module:
// RUN: not dg-opt %s --allow-unregistered-dialect -p 'convert-dghw-to-tosa{batch=0}' 2>&1 | filecheck %s --check-prefix=BATCH
// BATCH-LABEL: error: pass 'convert-dghw-to-tosa' failed: 'builtin.module': batch must be >= 1, got 0

// An op without a TOSA lowering (here one this build of dg does not know) is named with its
// source location; the annotated IR shows the rest of the module lowered around it.
// CHECK-LABEL: model.py:7:0: error: 'builtin.unregistered': no TOSA 1.0 lowering for 'dghw.future_op': convert-dghw-to-tosa takes dghw modules (docs/tosa.md lists each dghw op's TOSA form)
// CHECK:       function_type = (tensor<1x2xi32>) -> tensor<1x2xi32>
// CHECK:       "tosa.add"
// CHECK:       "dghw.future_op"(%{{.*}}) : (tensor<1x2xi32>) -> tensor<?x2xi32>
func.func @main(%x: tensor<?x2xi32>) -> tensor<?x2xi32> {
  %s = dghw.add %x, %x : (tensor<?x2xi32>, tensor<?x2xi32>) -> tensor<?x2xi32>
  %r = "dghw.future_op"(%s) : (tensor<?x2xi32>) -> tensor<?x2xi32> loc("model.py":7:0)
  func.return %r : tensor<?x2xi32>
}

// -----

// dghw.norm: TOSA 1.0's integer profile cannot express it; the message says why.
// CHECK-LABEL: norm.py:3:0: error: 'dghw.norm': has no TOSA 1.0 form: its exact algorithm (docs/dghw.md) forms 62-bit sums, an integer division and an integer square root, and TOSA 1.0's integer profile has no int64, no division and no square root; only an int32 multi-word emulation could express it (docs/tosa.md)
func.func @norm(%x: tensor<?x4xi8>) -> tensor<?x4xi8> {
  %n = dghw.norm %x {kind = "rms", input_zp = 0 : i32, output_zp = 0 : i32, eps = 1 : i64, multiplier = array<i32: 1, 1, 1, 1>, bias = array<i64: 0, 0, 0, 0>, shift = 30 : i32} : tensor<?x4xi8> -> tensor<?x4xi8> loc("norm.py":3:0)
  func.return %n : tensor<?x4xi8>
}
