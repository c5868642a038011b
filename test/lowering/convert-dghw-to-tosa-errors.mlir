// What convert-dghw-to-tosa cannot lower fails the pass, naming the op and where it came from.
// RUN: not dg-opt %s --allow-unregistered-dialect -p convert-dghw-to-tosa 2>&1 | filecheck %s

// An op without a TOSA lowering (here one this build of dg does not know) is named with its
// source location; the annotated IR shows the rest of the module lowered around it.
// CHECK-LABEL: model.py:7:0: error: pass 'convert-dghw-to-tosa' failed: 'builtin.unregistered': no TOSA 1.0 lowering for 'dghw.future_op': convert-dghw-to-tosa takes dghw modules (docs/tosa.md lists each dghw op's TOSA form)
// CHECK:       function_type = (tensor<1x2xi32>) -> tensor<1x2xi32>
// CHECK:       "tosa.add"
// CHECK:       "dghw.future_op"(%{{.*}}) : (tensor<1x2xi32>) -> tensor<?x2xi32>
func.func @main(%x: tensor<?x2xi32>) -> tensor<?x2xi32> {
  %s = dghw.add %x, %x : (tensor<?x2xi32>, tensor<?x2xi32>) -> tensor<?x2xi32>
  %r = "dghw.future_op"(%s) : (tensor<?x2xi32>) -> tensor<?x2xi32> loc("model.py":7:0)
  func.return %r : tensor<?x2xi32>
}
