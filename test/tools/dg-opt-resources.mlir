// dg-opt prints every dense constant of more than 1 KiB as `dense_resource<constant_N>`, its
// bytes in a `{-# dialect_resources #-}` section after the module (MLIR's blob: the hex of a
// little-endian uint32 alignment, then of the elements), as Program.save writes them; smaller
// constants stay inline. Its output reads back as the same module, section and all.

// RUN: dg-opt %s --split-input-file | filecheck %s
// RUN: dg-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// A blob's length is checked when it is read back: the round trip below.
// The resource round trip: dg-opt's output, read by dg-opt again, prints the same text.
// RUN: dg-opt %s --split-input-file -o %t.1.mlir
// RUN: dg-opt %t.1.mlir --split-input-file -o %t.2.mlir
// RUN: diff %t.1.mlir %t.2.mlir
// ... and the same as the input without its resources (through stdin too, which dg-opt reads whole).
// RUN: dg-opt %s --split-input-file --mlir-elide-elementsattrs-if-larger=0 -o %t.elided.1.mlir
// RUN: cat %t.1.mlir | dg-opt --split-input-file --mlir-elide-elementsattrs-if-larger=0 -o %t.elided.2.mlir
// RUN: diff %t.elided.1.mlir %t.elided.2.mlir

// CHECK-LABEL: func.func @big_and_small()
// CHECK-NEXT:    %w = dghw.constant {value = dense_resource<constant_0> : tensor<2048xi8>} : tensor<2048xi8>
// CHECK-NEXT:    %b = dghw.constant {value = dense_resource<constant_1> : tensor<300xi32>} : tensor<300xi32>
// CHECK-NEXT:    %s = dghw.constant {value = dense<[1, 2, 3, 4]> : tensor<4xi8>} : tensor<4xi8>
// CHECK-NEXT:    %k = dghw.constant {value = dense<7> : tensor<1024xi8>} : tensor<1024xi8>
// CHECK:       {-#
// CHECK-NEXT:    dialect_resources: {
// CHECK-NEXT:      builtin: {
// CHECK-NEXT:        constant_0: "0x01000000{{(01)+}}",
// CHECK-NEXT:        constant_1: "0x04000000{{(02010000)+}}"
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  #-}
// GENERIC-LABEL: "func.func"()
// GENERIC:         "dghw.constant"() <{value = dense_resource<constant_0> : tensor<2048xi8>}> : () -> tensor<2048xi8>
// GENERIC:       constant_0: "0x01000000{{(01)+}}",
func.func @big_and_small() -> (tensor<2048xi8>, tensor<300xi32>, tensor<4xi8>, tensor<1024xi8>) {
  %w = dghw.constant {value = dense<1> : tensor<2048xi8>} : tensor<2048xi8>
  %b = dghw.constant {value = dense<258> : tensor<300xi32>} : tensor<300xi32>
  %s = dghw.constant {value = dense<[1, 2, 3, 4]> : tensor<4xi8>} : tensor<4xi8>
  %k = dghw.constant {value = dense<7> : tensor<1024xi8>} : tensor<1024xi8>
  func.return %w, %b, %s, %k : tensor<2048xi8>, tensor<300xi32>, tensor<4xi8>, tensor<1024xi8>
}

// -----

// Input that already holds resources keeps them, each chunk with its own section.
// CHECK-LABEL: func.func @already_a_resource()
// CHECK-NEXT:    %w = dghw.constant {value = dense_resource<constant_0> : tensor<2x1024xi8>} : tensor<2x1024xi8>
// CHECK:       constant_0: "0x01000000{{(05)+(FB)+}}"
// CHECK-NEXT:  }
func.func @already_a_resource() -> tensor<2x1024xi8> {
  %w = dghw.constant {value = dense_resource<weight> : tensor<2x1024xi8>} : tensor<2x1024xi8>
  func.return %w : tensor<2x1024xi8>
}

{-#
  dialect_resources: {
    builtin: {
      weight: "0x0100000005050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505050505fbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbfb"
    }
  }
#-}

// -----

// Constants of more than N elements print without their value (--mlir-elide-elementsattrs-if-larger=N,
// as mlir-opt's): `dense_resource<__elided__>`, no section. dg-opt refuses to read that back.
// RUN: dg-opt %s --split-input-file --mlir-elide-elementsattrs-if-larger=4 | filecheck %s --check-prefix=ELIDE
// RUN: dg-opt %s --split-input-file --mlir-elide-elementsattrs-if-larger=4 -o %t.elided.mlir
// RUN: not dg-opt %t.elided.mlir --split-input-file 2>&1 | filecheck %s --check-prefix=ELIDED-INPUT
// ELIDE-LABEL: func.func @elided()
// ELIDE-NEXT:    %w = dghw.constant {value = dense_resource<__elided__> : tensor<2048xi8>} : tensor<2048xi8>
// ELIDE-NEXT:    %v = dghw.constant {value = dense_resource<__elided__> : tensor<5xi8>} : tensor<5xi8>
// ELIDE-NEXT:    %s = dghw.constant {value = dense<[1, 2, 3, 4]> : tensor<4xi8>} : tensor<4xi8>
// ELIDE-NOT:   dialect_resources
// ELIDE-NOT:   0x
// ELIDED-INPUT: dg-opt-resources.mlir.tmp.elided.mlir:{{[0-9]+}}:{{[0-9]+}}: error: dense_resource<__elided__> is a constant whose value was left out of this text (dg-opt --mlir-elide-elementsattrs-if-larger): it cannot be parsed back; print the module without that option
func.func @elided() -> (tensor<2048xi8>, tensor<5xi8>, tensor<4xi8>) {
  %w = dghw.constant {value = dense<1> : tensor<2048xi8>} : tensor<2048xi8>
  %v = dghw.constant {value = dense<[1, 2, 3, 4, 5]> : tensor<5xi8>} : tensor<5xi8>
  %s = dghw.constant {value = dense<[1, 2, 3, 4]> : tensor<4xi8>} : tensor<4xi8>
  func.return %w, %v, %s : tensor<2048xi8>, tensor<5xi8>, tensor<4xi8>
}
