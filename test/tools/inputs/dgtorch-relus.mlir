// A dgtorch module (not dghw): seven standalone relus, no loc(...).
func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %a = dgtorch.relu %x : tensor<?x4xf32> -> tensor<?x4xf32>
  %b = dgtorch.relu %a : tensor<?x4xf32> -> tensor<?x4xf32>
  %c = dgtorch.relu %b : tensor<?x4xf32> -> tensor<?x4xf32>
  %d = dgtorch.relu %c : tensor<?x4xf32> -> tensor<?x4xf32>
  %e = dgtorch.relu %d : tensor<?x4xf32> -> tensor<?x4xf32>
  %f = dgtorch.relu %e : tensor<?x4xf32> -> tensor<?x4xf32>
  %g = dgtorch.relu %f : tensor<?x4xf32> -> tensor<?x4xf32>
  func.return %g : tensor<?x4xf32>
}
