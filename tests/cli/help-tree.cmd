help tree
