// Avazu CSV (the Kaggle CTR prediction challenge's train file): a header
// line, then one sample per line of 24 comma-separated columns:
//   id,click,hour,C1,banner_pos,site_id,...,device_conn_type,C14,...,C21
// label = click (0 or 1); no dense features; id is dropped (unique per row,
// it would only memorize); every other column is categorical, empty =
// missing. `hour` (YYMMDDHH) is replaced by two tables, hour_of_day and
// day_of_week: the raw hour never repeats between the train and test
// days, so as a value it cannot generalize, while the daily and weekly
// cycles are where its signal is. 23 tables in all.
#pragma once

#include <memory>

#include "data/readers/text_format.hpp"

namespace actorrec::data::readers {

inline constexpr size_t kAvazuTables = 23;

// The header must match exactly; a mismatch names the file and the column.
std::unique_ptr<TextFormat> AvazuCsvFormat();

}  // namespace actorrec::data::readers
