// Input of internal-error.py.
func.func @f(%x: tensor<16xf32>) -> tensor<16xf32> {
  %y = asc.unary "exp" %x : tensor<16xf32>
  func.return %y : tensor<16xf32>
}
