-- 0017_eligible_cells: player_home_cells counts the players a match could invite whatever the
-- clock says (a home, match notifications on, a skill level, no ban recorded) per cell of a
-- fixed grid, skill level and reliability score, so that the eligible-player count of a search
-- in a dense area sums whole cells inside the radius instead of reading every home. A player
-- whose ban has lapsed keeps banned_until and is not counted: the cells give a lower bound.
-- The rules over this table (the triggers on players that keep it exact, and
-- eligible_players_count): sql/areas/40_players.sql; the grid (home_cell): sql/areas/10_basics.sql.

-- the grid: cell n of a coordinate spans [n / 100, (n + 1) / 100) degrees

CREATE TABLE player_home_cells (
    cell_lat          integer NOT NULL,
    cell_lng          integer NOT NULL,
    skill_level       text NOT NULL,
    reliability_score integer NOT NULL,
    players           integer NOT NULL CONSTRAINT player_home_cells_players_check CHECK (players >= 0),
    PRIMARY KEY (cell_lat, cell_lng, skill_level, reliability_score)
);
COMMENT ON TABLE player_home_cells IS
    'Players with a home, match notifications, a skill level and no recorded ban, counted per grid cell (home_cell), skill level and reliability score; kept by statement triggers on players.';
