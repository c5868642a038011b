// A hand-written dghw module whose rescale shift is out of range (no loc(...) on the op).
func.func @main(%acc: tensor<?x4xi32>) -> tensor<?x4xi8> {
  %r = dghw.rescale %acc {multiplier = array<i32: 1073741824>, shift = array<i32: 99>, input_zp = 0 : i32, output_zp = 0 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32} : tensor<?x4xi32> -> tensor<?x4xi8>
  func.return %r : tensor<?x4xi8>
}
