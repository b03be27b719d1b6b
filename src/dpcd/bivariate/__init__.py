"""Bivariate causal direction: private additive-noise models (Kusner et al. 2016), :mod:`dpcd.bivariate.anm`."""
