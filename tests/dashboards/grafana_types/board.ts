// Strict shapes of the dashboards gpuslo generates, built from the dashboard types Grafana 11
// publishes: @grafana/schema (dashboard, panel, field config and each panel plugin's options) and
// @grafana/grafana-foundation-sdk (the Prometheus query, which @grafana/schema 11 no longer ships).
// tests/dashboards/test_dashboards_schema.py writes `const board: Board = <dashboard JSON>;` per
// dashboard and runs `tsc --noEmit --strict`: a misspelt key, a legacy key, a missing required
// option or a wrong value type is an error (TypeScript's excess-property check on object
// literals), and `Lit<Dashboard>` proves these shapes stay assignable to Grafana's own type.

import type * as schema from "@grafana/schema";
import type * as prometheus from "@grafana/grafana-foundation-sdk/prometheus";
import type * as stat from "@grafana/schema/dist/esm/raw/composable/stat/panelcfg/x/StatPanelCfg_types.gen.js";
import type * as table from "@grafana/schema/dist/esm/raw/composable/table/panelcfg/x/TablePanelCfg_types.gen.js";
import type * as timeseries from "@grafana/schema/dist/esm/raw/composable/timeseries/panelcfg/x/TimeSeriesPanelCfg_types.gen.js";
import type * as bargauge from "@grafana/schema/dist/esm/raw/composable/bargauge/panelcfg/x/BarGaugePanelCfg_types.gen.js";

// JSON holds an enum's value, not the enum: `"absolute"`, not `ThresholdsMode.Absolute`.
// Lit<T> turns every string enum into the union of its values, recursively.
export type Lit<T> = T extends string
  ? `${T}`
  : T extends Array<infer U>
    ? Array<Lit<U>>
    : T extends object
      ? { [K in keyof T]: Lit<T[K]> }
      : T;

// The Prometheus query as Grafana 11's Prometheus data source stores it (the foundation SDK's
// `dataquery`, less its TypeScript-only variant marker).
export type PromQuery = Lit<Omit<prometheus.dataquery, "_implementsDataqueryVariant">>;

// Override properties the generator writes, each with the type Grafana reads for it
// (schema.FieldConfigSource types `value` as unknown).
type Property =
  | { id: "custom.cellOptions"; value: Lit<schema.TableCellOptions> }
  | { id: "custom.width"; value: number }
  | { id: "displayName"; value: string }
  | { id: "mappings"; value: Lit<schema.ValueMapping>[] }
  | { id: "thresholds"; value: Lit<schema.ThresholdsConfig> }
  | { id: "unit"; value: string };
type Override = { matcher: Lit<schema.MatcherConfig>; properties: Property[] };

type FieldConfigSource<Custom> = {
  defaults: Lit<Omit<schema.FieldConfig, "custom">> & { custom?: Lit<Custom> };
  overrides: Override[];
};

type Transformation = { id: string; options: Record<string, unknown>; disabled?: boolean };

type PanelOf<Kind extends string, Options, Custom> = Lit<
  Omit<schema.Panel, "type" | "options" | "fieldConfig" | "targets" | "transformations">
> & {
  type: Kind;
  options: Lit<Options>;
  fieldConfig: FieldConfigSource<Custom>;
  targets: PromQuery[];
  transformations?: Transformation[];
};

export type StatPanel = PanelOf<"stat", stat.Options, {}>;
export type TablePanel = PanelOf<"table", table.Options, table.FieldConfig>;
export type TimeSeriesPanel = PanelOf<"timeseries", timeseries.Options, timeseries.FieldConfig>;
export type BarGaugePanel = PanelOf<"bargauge", bargauge.Options, {}>;
export type Panel = StatPanel | TablePanel | TimeSeriesPanel | BarGaugePanel;

// Grafana's Prometheus annotation support keeps these beside the query (public/app/plugins/
// datasource/prometheus: annotations.ts reads titleFormat, textFormat, tagKeys, useValueForTime
// from the annotation itself); schema.AnnotationQuery does not list them.
export type PromAnnotation = Lit<schema.AnnotationQuery<PromQuery>> & {
  titleFormat?: string;
  textFormat?: string;
  tagKeys?: string;
  useValueForTime?: boolean;
};
export type BuiltInAnnotation = Lit<Omit<schema.AnnotationQuery, "target">> & { builtIn: 1 };

export type Board = Lit<Omit<schema.Dashboard, "panels" | "annotations" | "templating">> & {
  panels: Panel[];
  annotations: { list: Array<BuiltInAnnotation | PromAnnotation> };
  templating: { list: Lit<schema.VariableModel>[] };
};

// Every Board is a Dashboard as Grafana types it.
export function asDashboard(board: Board): Lit<schema.Dashboard> {
  return board;
}
