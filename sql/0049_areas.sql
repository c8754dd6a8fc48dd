-- 0049_areas: functions, views and triggers now live in sql/areas/, in their current form;
-- what the migrations before this one created and no area defines goes.
DROP FUNCTION IF EXISTS sql_function_keep_plans(regprocedure, boolean);
