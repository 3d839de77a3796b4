// SPDX-License-Identifier: Apache-2.0
// Expecting a dpselect::InvalidArgument whose message names the parameter and the value, and the
// non-finite values such tests pass.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <limits>
#include <stdexcept>
#include <string>

#include "dpselect/errors.hpp"

namespace dpselect::testing {

// The bad values every validation test passes.
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

// Runs `call` expecting InvalidArgument (a std::invalid_argument) whose message contains every
// fragment.
template <class Call>
void expect_invalid_message(Call call, std::initializer_list<std::string> fragments) {
  try {
    call();
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(dynamic_cast<const InvalidArgument*>(&error), nullptr);
    for (const std::string& fragment : fragments) {
      EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos)
          << "message '" << error.what() << "' lacks '" << fragment << "'";
    }
  }
}

}  // namespace dpselect::testing
