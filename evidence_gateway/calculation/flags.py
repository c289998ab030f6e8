"""The ids a row can be flagged or noted with: written by the engine, counted by the quality rules.

Kept apart from both so that the engine (which raises them) and the rules (which read the
engine's result) stand in one order, rules on top of the engine.
"""

MISSING_FLAG = "missing_required_fields"
ZERO_DISTANCE = "zero_distance"
ZERO_MASS = "zero_mass"
INTENSITY_OUT_OF_RANGE = "carrier_intensity_out_of_range"
OUTSIDE_PERIOD = "outside_reporting_period"
PAYLOAD_BELOW_MASS = "payload_below_mass"
AIR_ACTUAL_TOO_SHORT = "air_actual_too_short"
SHARE_ABOVE_ONE = "allocation_share_above_one"
# Method notes (not implausibilities): counted in rules, not in flagged_shipments_count.
FUEL_NOT_ALLOCATED = "fuel_not_allocated"
TTW_DERIVED = "carrier_ttw_derived"
WTT_DERIVED = "carrier_wtt_derived"
DISTANCE_ADJUSTED = "distance_adjusted"
GCD_SURFACE_MODE = "gcd_surface_mode"
ELECTRICITY_COUNTRY_MISSING = "electricity_country_missing"
EMPTY_RUNNING_ADDED = "empty_running_added"
EMPTY_RUNNING_NOT_DECLARED = "empty_running_not_declared"
