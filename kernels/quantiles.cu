#include "quantiles/quantiles_internal.hpp"
