// The logic layers legalize straight from dgtorch to dghw (convert-dgtorch-to-dgq:
// LegalizeBitwiseShift, LegalizeBitwise, LegalizeCompare, LegalizeBitwiseTensor,
// LegalizeCompareTensor, LegalizeRepeat), then pass through
// convert-dgq-to-dghw unchanged: i32 tensors, no quantization, the model's own layout.
// RUN: dg-opt %s -p convert-dgtorch-to-dgq | filecheck %s
// RUN: dg-opt %s -p convert-dgtorch-to-dgq --print-debuginfo | filecheck %s --check-prefix=LOC
// RUN: dg-opt %s -p dg-pipeline | filecheck %s --check-prefix=HW

// CHECK-LABEL: func.func @main(%x: tensor<?x3xi32>) -> tensor<?x6xi32>
// CHECK-NEXT:    %l = dghw.shift %x {direction = "left", shift = 4 : i64} : tensor<?x3xi32> -> tensor<?x3xi32>
// CHECK-NEXT:    %r = dghw.shift %l {direction = "right", shift = 31 : i64} : tensor<?x3xi32> -> tensor<?x3xi32>
// CHECK-NEXT:    %a = dghw.bitwise %r {kind = "and", value = 255 : i64} : tensor<?x3xi32> -> tensor<?x3xi32>
// CHECK-NEXT:    %o = dghw.bitwise %a {kind = "or", value = -256 : i64} : tensor<?x3xi32> -> tensor<?x3xi32>
// CHECK-NEXT:    %t = dghw.tile %o {multiples = array<i64: 1, 2>} : tensor<?x3xi32> -> tensor<?x6xi32>
// CHECK-NEXT:    %e = dghw.bitwise %t {kind = "xor", value = 7 : i64} : tensor<?x6xi32> -> tensor<?x6xi32>
// CHECK-NEXT:    %c = dghw.compare %e {kind = "lt", value = 100 : i64} : tensor<?x6xi32> -> tensor<?x6xi32>
// CHECK-NEXT:    func.return %c : tensor<?x6xi32>

// The user's source location stays on each op.
// LOC: dghw.shift %x {{.*}} loc("model.py":10:0)
// LOC: dghw.bitwise %a {{.*}} loc("model.py":13:0)
// LOC: dghw.tile {{.*}} loc("model.py":14:0)
// LOC: dghw.compare {{.*}} loc("model.py":16:0)

// HW-LABEL: func.func @main(%x: tensor<?x3xi32>) -> tensor<?x6xi32>
// HW-NOT:     dgtorch
// HW-NOT:     dgq
// HW:         dghw.tile
// HW:         dghw.compare
// HW:         func.return %c : tensor<?x6xi32>
func.func @main(%x: tensor<?x3xi32>) -> tensor<?x6xi32> {
  %l = dgtorch.bitwise_shift %x {direction = "left", shift = 4 : i64} : tensor<?x3xi32> -> tensor<?x3xi32> loc("model.py":10:0)
  %r = dgtorch.bitwise_shift %l {direction = "right", shift = 31 : i64} : tensor<?x3xi32> -> tensor<?x3xi32> loc("model.py":11:0)
  %a = dgtorch.bitwise %r {kind = "and", value = 255 : i64} : tensor<?x3xi32> -> tensor<?x3xi32> loc("model.py":12:0)
  %o = dgtorch.bitwise %a {kind = "or", value = -256 : i64} : tensor<?x3xi32> -> tensor<?x3xi32> loc("model.py":13:0)
  %t = dgtorch.repeat %o {repeats = array<i64: 1, 2>} : tensor<?x3xi32> -> tensor<?x6xi32> loc("model.py":14:0)
  %e = dgtorch.bitwise %t {kind = "xor", value = 7 : i64} : tensor<?x6xi32> -> tensor<?x6xi32> loc("model.py":15:0)
  %c = dgtorch.compare %e {kind = "lt", value = 100 : i64} : tensor<?x6xi32> -> tensor<?x6xi32> loc("model.py":16:0)
  func.return %c : tensor<?x6xi32>
}

// Logic ops on two tensors: the operands stay as they are (no broadcasting to legalize).
// CHECK-LABEL: func.func @bitwise_tensor(%x: tensor<?x3xi32>, %y: tensor<?x3xi32>) -> tensor<?x3xi32>
// CHECK-NEXT:    %b = dghw.bitwise_tensor %x, %y {kind = "xor"} : (tensor<?x3xi32>, tensor<?x3xi32>) -> tensor<?x3xi32>
// CHECK-NEXT:    func.return %b : tensor<?x3xi32>
// LOC: dghw.bitwise_tensor %x, %y {{.*}} loc("model.py":20:0)
// HW-LABEL: func.func @bitwise_tensor
// HW-NEXT:    dghw.bitwise_tensor
func.func @bitwise_tensor(%x: tensor<?x3xi32>, %y: tensor<?x3xi32>) -> tensor<?x3xi32> {
  %b = dgtorch.bitwise_tensor %x, %y {kind = "xor"} : (tensor<?x3xi32>, tensor<?x3xi32>) -> tensor<?x3xi32> loc("model.py":20:0)
  func.return %b : tensor<?x3xi32>
}

// CHECK-LABEL: func.func @compare_tensor(%x: tensor<?x3xi32>, %y: tensor<?x3xi32>) -> tensor<?x3xi32>
// CHECK-NEXT:    %c = dghw.compare_tensor %x, %y {kind = "ge"} : (tensor<?x3xi32>, tensor<?x3xi32>) -> tensor<?x3xi32>
// CHECK-NEXT:    func.return %c : tensor<?x3xi32>
// LOC: dghw.compare_tensor %x, %y {{.*}} loc("model.py":30:0)
// HW-LABEL: func.func @compare_tensor
// HW-NEXT:    dghw.compare_tensor
func.func @compare_tensor(%x: tensor<?x3xi32>, %y: tensor<?x3xi32>) -> tensor<?x3xi32> {
  %c = dgtorch.compare_tensor %x, %y {kind = "ge"} : (tensor<?x3xi32>, tensor<?x3xi32>) -> tensor<?x3xi32> loc("model.py":30:0)
  func.return %c : tensor<?x3xi32>
}
