/**
 * A table of a folder's rows. Up to WINDOW_PAST rows it draws them all, so the browser's Find
 * sees every name: the first view's rows at once, the rest DRAW_STEP at a time between frames (so
 * the first rows come as fast as a window's). Past that (a folder may hold 10,000 entries) only
 * the rows in view: rows have one
 * fixed height (3rem, from the style sheet), two spacer rows stand for the rows above and below,
 * and a scroll reads scrollTop once per animation frame (no layout is forced between writes).
 * The header stays a real table header (sortable by its buttons), each row keeps its
 * aria-rowindex among all rows, and the rows' links and buttons are ordinary tab stops: focusing
 * one at the window's edge scrolls, which brings the next rows in.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';

/** Rows drawn beyond each edge of the view, so a fast scroll or a Tab never meets a blank. */
const OVERSCAN = 8;
/** Up to this many rows all are drawn (Find finds every name); past it, only those in view (the page says so). */
export const WINDOW_PAST = 500;
/** Rows added per turn while a short folder is drawn whole. */
const DRAW_STEP = 100;

export function FilesWindow<T>(props: {
  rows: readonly T[];
  label: string;
  header: ComponentChildren;
  columns: number;
  rowKey: (row: T) => string;
  renderRow: (row: T, index: number) => ComponentChildren;
}) {
  const { rows, label, header, columns, rowKey, renderRow } = props;
  const scroller = useRef<HTMLDivElement>(null);
  const [rowHeight, setRowHeight] = useState(48);
  const [viewHeight, setViewHeight] = useState(800);
  const [first, setFirst] = useState(0);
  const [drawn, setDrawn] = useState(0);
  const frame = useRef(0);

  useLayoutEffect(() => {
    // 3rem in pixels, read once: the root font size the row height is given in.
    setRowHeight(3 * parseFloat(getComputedStyle(document.documentElement).fontSize || '16'));
    const element = scroller.current;
    if (!element) return;
    const observer = new ResizeObserver((records) => {
      const height = records[0]?.contentRect.height;
      if (height) setViewHeight(height);
    });
    observer.observe(element);
    return () => {
      observer.disconnect();
      cancelAnimationFrame(frame.current);
    };
  }, []);

  // A new listing starts at its top.
  useEffect(() => {
    if (scroller.current) scroller.current.scrollTop = 0;
    setFirst(0);
  }, [rows]);

  // A short folder: the rest of its rows, a step at a time, each in a turn of its own. What was
  // drawn stays (a filter narrowing the rows redraws none); another folder mounts a new table.
  const inView = Math.ceil(viewHeight / rowHeight) + OVERSCAN;
  useEffect(() => {
    if (rows.length > WINDOW_PAST) return;
    let count = Math.min(rows.length, Math.max(drawn, inView));
    setDrawn(count);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const more = () => {
      count = Math.min(rows.length, count + DRAW_STEP);
      setDrawn(count);
      if (count < rows.length) timer = setTimeout(more, 0);
    };
    if (count < rows.length) timer = setTimeout(more, 0);
    return () => clearTimeout(timer);
  }, [rows, inView]);

  const onScroll = () => {
    if (frame.current || rows.length <= WINDOW_PAST) return;
    frame.current = requestAnimationFrame(() => {
      frame.current = 0;
      const element = scroller.current;
      if (element) setFirst(Math.floor(element.scrollTop / rowHeight));
    });
  };

  const whole = rows.length <= WINDOW_PAST;
  const start = whole ? 0 : Math.max(0, Math.min(first, rows.length) - OVERSCAN);
  const end = whole ? Math.min(rows.length, Math.max(drawn, inView)) : Math.min(rows.length, first + inView);
  const above = start * rowHeight;
  const below = (rows.length - end) * rowHeight;
  return (
    // As tall as its rows (the style sheet caps it to the window): a short folder leaves no blank box.
    <div class="files-scroller" ref={scroller} onScroll={onScroll} style={{ height: `${(rows.length + 1) * rowHeight + 2}px` }}>
      <table class="files-table" aria-label={label} aria-rowcount={rows.length + 1}>
        <thead>
          <tr aria-rowindex={1}>{header}</tr>
        </thead>
        <tbody>
          {above > 0 && (
            <tr class="files-spacer" aria-hidden="true" style={{ height: `${above}px` }}>
              <td colSpan={columns} />
            </tr>
          )}
          {rows.slice(start, end).map((row, offset) => (
            <tr key={rowKey(row)} aria-rowindex={start + offset + 2}>
              {renderRow(row, start + offset)}
            </tr>
          ))}
          {below > 0 && (
            <tr class="files-spacer" aria-hidden="true" style={{ height: `${below}px` }}>
              <td colSpan={columns} />
            </tr>
          )}
        </tbody>
      </table>
    </div>
  );
}
