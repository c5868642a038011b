"""The torch side of dg: the quantizer, prepare/freeze, the FX importer and `dg.export`."""
