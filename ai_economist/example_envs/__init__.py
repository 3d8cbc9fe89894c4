"""WarpDrive's example environments on the generic GPU path (one folder each)."""
