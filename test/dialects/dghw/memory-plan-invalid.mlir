// Every diagnostic of dghw-verify-memory-plan, which checks a plan from the IR alone.
// Each chunk is a hand-written plan with one fault; the diagnostic names the tensors.
// RUN: dg-opt %s --split-input-file --verify-diagnostics -p dghw-verify-memory-plan 2>&1 | filecheck %s
// Without --verify-diagnostics the first fault fails the run, at the tensor's location:
// RUN: not dg-opt %s --split-input-file -p dghw-verify-memory-plan 2>&1 | filecheck %s --check-prefix=FAIL
// FAIL: model.py:4:0: error: pass 'dghw-verify-memory-plan' failed: 'dghw.shift': %x (argument #0) and %a

// Two tensors live at the same step may not share a byte: %x is read again by the bitwise op,
// so the first shift's result cannot go where %x is.
// CHECK-LABEL: model.py:4:0: error: 'dghw.shift': %x (argument #0) and %a (dghw.shift at model.py:4) are both live at step 1 but share bytes: [0, 64) and [0, 64)
func.func @main(%x: tensor<?x16xi32> {dghw.offset = 0 : i64}) -> tensor<?x16xi32> attributes {dghw.memory_plan = {arena_bytes = 128 : i64, lower_bound_bytes = 128 : i64, constant_bytes = 0 : i64}} {
  %a = dghw.shift %x {dghw.offset = 0 : i64, direction = "left", shift = 1 : i64} : tensor<?x16xi32> -> tensor<?x16xi32> loc("model.py":4:0)
  %b = dghw.bitwise_tensor %a, %x {dghw.offset = 64 : i64, kind = "and"} : (tensor<?x16xi32>, tensor<?x16xi32>) -> tensor<?x16xi32>
  func.return %b : tensor<?x16xi32>
}

// -----

// A partial overlap is as wrong as a full one, and every pair is reported.
// CHECK-LABEL: 'dghw.transpose': %x (argument #0) and %t (dghw.transpose) are both live at step 1 but share bytes: [0, 64) and [48, 112)
func.func @main(%x: tensor<?x4x16xi8> {dghw.offset = 0 : i64}) -> tensor<?x16x4xi8> attributes {dghw.memory_plan = {arena_bytes = 128 : i64, lower_bound_bytes = 128 : i64, constant_bytes = 0 : i64}} {
  %t = dghw.transpose %x {dghw.offset = 48 : i64, perm = array<i64: 0, 2, 1>} : tensor<?x4x16xi8> -> tensor<?x16x4xi8>
  func.return %t : tensor<?x16x4xi8>
}

// -----

// A widening op cannot write over its operand, even where the operand dies.
// CHECK-LABEL: 'dghw.rescale': %x (argument #0) and %w (dghw.rescale) are both live at step 1 but share bytes: [0, 16) and [0, 64)
func.func @main(%x: tensor<?x16xi8> {dghw.offset = 0 : i64}) -> tensor<?x16xi32> attributes {dghw.memory_plan = {arena_bytes = 64 : i64, lower_bound_bytes = 80 : i64, constant_bytes = 0 : i64}} {
  %w = dghw.rescale %x {dghw.offset = 0 : i64, multiplier = array<i32: 1073741824>, shift = array<i32: 30>, input_zp = 0 : i32, output_zp = 0 : i32, clamp_min = -2147483648 : i32, clamp_max = 2147483647 : i32} : tensor<?x16xi8> -> tensor<?x16xi32>
  func.return %w : tensor<?x16xi32>
}

// -----

// Constants are all live all the time: none may share a byte with another.
// CHECK-LABEL: 'dghw.constant': %w (dghw.constant) and %b (dghw.constant) are both live at step 0 but share bytes: [0, 48) and [32, 80)
func.func @main(%x: tensor<?x2x2x4xi8> {dghw.offset = 160 : i64}) -> tensor<?x2x2x10xi32> attributes {dghw.memory_plan = {arena_bytes = 176 : i64, lower_bound_bytes = 176 : i64, constant_bytes = 96 : i64}} {
  %w = dghw.constant {dghw.offset = 0 : i64, value = dense<1> : tensor<10x1x1x4xi8>} : tensor<10x1x1x4xi8>
  %b = dghw.constant {dghw.offset = 32 : i64, value = dense<0> : tensor<10xi32>} : tensor<10xi32>
  %c = dghw.conv2d %x, %w, %b {dghw.offset = 0 : i64, stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, input_zp = 0 : i32, weight_zp = 0 : i32} : (tensor<?x2x2x4xi8>, tensor<10x1x1x4xi8>, tensor<10xi32>) -> tensor<?x2x2x10xi32>
  func.return %c : tensor<?x2x2x10xi32>
}

// -----

// Every buffer lies inside its region.
// CHECK-LABEL: 'dghw.table': %t (dghw.table) occupies bytes [64, 128) but the arena has 100 bytes
func.func @main(%x: tensor<?x64xi8> {dghw.offset = 0 : i64}) -> tensor<?x64xi8> attributes {dghw.memory_plan = {arena_bytes = 100 : i64, lower_bound_bytes = 128 : i64, constant_bytes = 0 : i64}} {
  %t = dghw.table %x {dghw.offset = 64 : i64, table = array<i8: 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127, -128, -127, -126, -125, -124, -123, -122, -121, -120, -119, -118, -117, -116, -115, -114, -113, -112, -111, -110, -109, -108, -107, -106, -105, -104, -103, -102, -101, -100, -99, -98, -97, -96, -95, -94, -93, -92, -91, -90, -89, -88, -87, -86, -85, -84, -83, -82, -81, -80, -79, -78, -77, -76, -75, -74, -73, -72, -71, -70, -69, -68, -67, -66, -65, -64, -63, -62, -61, -60, -59, -58, -57, -56, -55, -54, -53, -52, -51, -50, -49, -48, -47, -46, -45, -44, -43, -42, -41, -40, -39, -38, -37, -36, -35, -34, -33, -32, -31, -30, -29, -28, -27, -26, -25, -24, -23, -22, -21, -20, -19, -18, -17, -16, -15, -14, -13, -12, -11, -10, -9, -8, -7, -6, -5, -4, -3, -2, -1>} : tensor<?x64xi8> -> tensor<?x64xi8>
  func.return %t : tensor<?x64xi8>
}

// -----

// Offsets are multiples of 16.
// CHECK-LABEL: 'dghw.reshape': %r (dghw.reshape) is at offset 8, which is not a multiple of 16
func.func @main(%x: tensor<?x4x4xi8> {dghw.offset = 0 : i64}) -> tensor<?x16xi8> attributes {dghw.memory_plan = {arena_bytes = 32 : i64, lower_bound_bytes = 16 : i64, constant_bytes = 0 : i64}} {
  %r = dghw.reshape %x {dghw.offset = 8 : i64} : tensor<?x4x4xi8> -> tensor<?x16xi8>
  func.return %r : tensor<?x16xi8>
}

// -----

// Every tensor has an offset.
// CHECK-LABEL: 'dghw.reshape': %r (dghw.reshape) has no 'dghw.offset': every activation tensor and constant needs one
func.func @main(%x: tensor<?x4x4xi8> {dghw.offset = 0 : i64}) -> tensor<?x16xi8> attributes {dghw.memory_plan = {arena_bytes = 16 : i64, lower_bound_bytes = 16 : i64, constant_bytes = 0 : i64}} {
  %r = dghw.reshape %x : tensor<?x4x4xi8> -> tensor<?x16xi8>
  func.return %r : tensor<?x16xi8>
}

// -----

// Without the totals there is no plan to check.
// CHECK-LABEL: 'func.func': @main has no memory plan (the 'dghw.memory_plan' attribute with arena_bytes, lower_bound_bytes and constant_bytes) Fix: run dghw-plan-memory first
func.func @main(%x: tensor<?x16xi8>) -> tensor<?x16xi8> {
  func.return %x : tensor<?x16xi8>
}

// -----

// Only the batch axis may be dynamic: a tensor of unknown size has no place in a plan.
// CHECK-LABEL: 'func.func': cannot plan a tensor: only the batch axis may be dynamic, got tensor<?x?xi8>
func.func @main(%x: tensor<?x?xi8> {dghw.offset = 0 : i64}) -> tensor<?x?xi8> attributes {dghw.memory_plan = {arena_bytes = 16 : i64, lower_bound_bytes = 16 : i64, constant_bytes = 0 : i64}} {
  func.return %x : tensor<?x?xi8>
}
