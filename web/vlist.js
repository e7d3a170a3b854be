// A virtualised list: only the rows in view (plus a margin) exist in the DOM, so 10,000 jobs
// scroll as smoothly as ten. Rows have a fixed height; columns are a CSS grid template.

const defaultRowHeight = 28;
const margin = 10;

export class VirtualList {
  // columns: [{title, width, text: (item) => string, className?: (item) => string}];
  // options.rowHeight: taller rows whose cells wrap (a sentence that must show whole).
  constructor(parent, columns, onSelect, { rowHeight = defaultRowHeight } = {}) {
    this.columns = columns;
    this.rowHeight = rowHeight;
    this.onSelect = onSelect;
    this.items = [];
    const template = columns.map((c) => c.width || '1fr').join(' ');
    const head = document.createElement('div');
    head.className = 'vhead';
    head.style.gridTemplateColumns = template;
    for (const c of columns) {
      const cell = document.createElement('div');
      cell.className = 'cell';
      cell.textContent = c.title;
      head.appendChild(cell);
    }
    this.box = document.createElement('div');
    this.box.className = rowHeight === defaultRowHeight ? 'vlist' : 'vlist tall';
    this.spacer = document.createElement('div');
    this.box.appendChild(this.spacer);
    this.template = template;
    parent.append(head, this.box);
    this.box.addEventListener('scroll', () => this.render());
  }

  setItems(items) {
    this.items = items;
    this.spacer.style.height = `${items.length * this.rowHeight}px`;
    this.render();
  }

  render() {
    const first = Math.max(0, Math.floor(this.box.scrollTop / this.rowHeight) - margin);
    const count = Math.ceil(this.box.clientHeight / this.rowHeight) + 2 * margin;
    const last = Math.min(this.items.length, first + count);
    for (const row of [...this.box.querySelectorAll('.row')]) row.remove();
    const fragment = document.createDocumentFragment();
    for (let i = first; i < last; i++) {
      const item = this.items[i];
      const row = document.createElement('div');
      row.className = 'row';
      row.style.top = `${i * this.rowHeight}px`;
      row.style.height = `${this.rowHeight}px`;
      row.style.gridTemplateColumns = this.template;
      for (const c of this.columns) {
        const cell = document.createElement('div');
        cell.className = `cell ${c.className ? c.className(item) : ''}`;
        cell.textContent = c.text(item);
        row.appendChild(cell);
      }
      if (this.onSelect) row.addEventListener('click', () => this.onSelect(item));
      fragment.appendChild(row);
    }
    this.box.appendChild(fragment);
  }
}
