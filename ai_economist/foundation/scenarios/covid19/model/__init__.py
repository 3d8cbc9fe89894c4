"""The COVID-19 model, the numpy truth every backend and kernel mirrors: dynamics, parameters, the batched simulator, component constants, metrics and observations."""
